/**
 * The admin API client: every call carries the token from the session; answers are the
 * server's envelopes, turned into data or an ApiError with the server's code and message.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export type AgentSummary = {
  id: string;
  name: string;
  libraryEnabled: boolean;
  documentCount: number;
  gapCount: number;
  openClusterCount: number;
  draftCount: number;
  lessonCounts: LessonCounts;
};
export type LessonStatus = "draft" | "active" | "deprecated";
export type LessonCounts = Record<LessonStatus, number>;
export type Lesson = {
  id: string;
  summary: string;
  category: string;
  status: LessonStatus;
  confidence: number;
  tags: string[];
  pinned: boolean;
  source: string;
  supportCount: number;
  contradictCount: number;
  injectedCount: number;
  usageCount: number;
  deprecatedReason: string | null;
  createdAt: number;
};
export type LedgerEntry = {
  id: number;
  action: string;
  actor: string;
  reason: string | null;
  before: { status?: string } | null;
  after: { status?: string } | null;
  createdAt: number;
};
export type Rate = { n: number; successes: number; rate: number | null };
export type Comparison = {
  treatment: Rate;
  holdout: Rate;
  effect: number | null;
  interval: [number, number] | null;
  verdict: string;
};
/** A lesson's evidence in the effect report; `uses` and `tagHoldout` are missing from older servers. */
export type LessonEvidence = { id: string; uses?: Rate; citedSuccesses?: number; tagHoldout?: Rate };
export type EffectReport = {
  agentId: string;
  overall: Comparison;
  byTag: ({ tag: string } & Comparison)[];
  lessons?: LessonEvidence[];
  created: number;
  promoted: number;
  deprecated: number;
  phantomCitations: number;
  distillCalls: number;
  skipped: number;
  tokens: number;
};
export type DocSummary = {
  fileName: string;
  title: string;
  keywords: string[];
  summary: string;
  applicable: string;
  lastVerified: string;
  sizeBytes: number;
  updatedAt: string;
};
export type DocList = { enabled: boolean; docs: DocSummary[]; indexContent: string };
export type DraftRow = {
  id: number;
  intentKey: string;
  status: string;
  skillName: string | null;
  path: string | null;
  clusterSize: number;
  reason: string | null;
  createdAt: number;
};
export type GapCluster = {
  intentKey: string;
  reason: string;
  gapClass: string;
  count: number;
  sessions: number;
  users: number;
  firstSeen: number;
  lastSeen: number;
  samples: string[];
  draft: DraftRow | null;
};
/** Environment failures of one cause (an outage, not a missing capability); never drafted. */
export type EnvironmentCluster = {
  cause: string;
  count: number;
  firstSeenAt: number;
  lastSeenAt: number;
  lastDetail: string | null;
};
export type GapReport = {
  agent: string;
  sinceHours: number;
  clusters: GapCluster[];
  /** Missing from servers older than the environment section. */
  environment?: EnvironmentCluster[];
  drafts: DraftRow[];
};
/** An always-on rule of an agent (mirrors src/store/rules-store.ts). */
export type Rule = {
  id: number;
  agentId: string;
  text: string;
  status: "active" | "removed";
  source: string | null;
  createdAt: number;
  updatedAt: number;
};
export type RuleList = { agentId: string; maxRules: number; maxChars: number; rules: Rule[] };
export type RuleCandidate = { id: string; text: string; evidence: string };
export type DraftDetail = { name: string; intentKey: string; status: string; path: string; content: string };
/** One MCP server of an agent (mirrors src/admin/mcp-view.ts; never an env or header value). */
export type McpServer = {
  name: string;
  transport: "stdio" | "http";
  state: string;
  tools: { name: string; description: string }[];
  restarts: number;
  lastError?: string;
  lastErrorAt?: number;
  configured: { command?: string; urlHost?: string };
};
export type AgentMcp = { agentId: string; running: boolean; botAttached: boolean; servers: McpServer[] };

export type Api = ReturnType<typeof createApi>;

export function createApi(token: () => string | null) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token() ?? ""}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        cache: "no-store",
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError("NETWORK", (error as Error).message, 0);
    }
    let envelope: { ok?: boolean; data?: T; error?: { code?: string; message?: string } };
    try {
      envelope = (await response.json()) as typeof envelope;
    } catch {
      throw new ApiError("BAD_ANSWER", `${method} ${path}: HTTP ${response.status}, not JSON`, response.status);
    }
    if (envelope.ok !== true)
      throw new ApiError(
        envelope.error?.code ?? "UNKNOWN",
        envelope.error?.message ?? `HTTP ${response.status}`,
        response.status,
      );
    return envelope.data as T;
  };
  const agent = (id: string) => `/v1/agents/${encodeURIComponent(id)}`;
  const library = (id: string) => `${agent(id)}/experience-library`;
  const file = (name: string) => `file=${encodeURIComponent(name)}`;
  return {
    agents: () => call<AgentSummary[]>("GET", "/v1/agents"),
    setLibrary: (id: string, enabled: boolean) =>
      call<{ id: string; libraryEnabled: boolean }>("PATCH", library(id), { enabled }),
    docs: (id: string) => call<DocList>("GET", `${library(id)}/docs`),
    readDoc: (id: string, name: string) =>
      call<{ fileName: string; content: string }>("GET", `${library(id)}/docs/content?${file(name)}`),
    writeDoc: (id: string, fileName: string, content: string) =>
      call<{ fileName: string; created: boolean; sizeBytes: number; index: string }>(
        "PUT",
        `${library(id)}/docs/content`,
        { fileName, content },
      ),
    deleteDoc: (id: string, name: string) =>
      call<{ fileName: string; deleted: boolean; index: string }>("DELETE", `${library(id)}/docs?${file(name)}`),
    rebuildIndex: (id: string) =>
      call<{ report: string; documentCount: number }>("POST", `${library(id)}/index/rebuild`),
    gaps: (id: string, sinceHours?: number) =>
      call<GapReport>(
        "GET",
        `${agent(id)}/capability-gaps${sinceHours === undefined ? "" : `?sinceHours=${sinceHours}`}`,
      ),
    readDraft: (id: string, name: string) =>
      call<DraftDetail>("GET", `${agent(id)}/skill-drafts/${encodeURIComponent(name)}`),
    lessons: (id: string, status?: LessonStatus) =>
      call<Lesson[]>("GET", `${agent(id)}/experiences${status ? `?status=${status}` : ""}`),
    lesson: (id: string, lessonId: string) =>
      call<{ lesson: Lesson; ledger: LedgerEntry[] }>(
        "GET",
        `${agent(id)}/experiences/${encodeURIComponent(lessonId)}`,
      ),
    lessonAction: (id: string, lessonId: string, action: "pin" | "unpin" | "restore") =>
      call<Lesson>("POST", `${agent(id)}/experiences/${encodeURIComponent(lessonId)}/${action}`),
    deprecateLesson: (id: string, lessonId: string, reason: string) =>
      call<Lesson>("POST", `${agent(id)}/experiences/${encodeURIComponent(lessonId)}/deprecate`, { reason }),
    effectReport: (id: string) => call<EffectReport>("GET", `${agent(id)}/experiences-report`),
    mcp: (id: string) => call<AgentMcp>("GET", `${agent(id)}/mcp`),
    rules: (id: string) => call<RuleList>("GET", `${agent(id)}/rules`),
    ruleCandidates: (id: string) => call<RuleCandidate[]>("GET", `${agent(id)}/rules/candidates`),
    acceptRule: (id: string, candidate: string, text?: string) =>
      call<Rule>("POST", `${agent(id)}/rules`, text === undefined ? { candidate } : { candidate, text }),
    removeRule: (id: string, ruleId: number) => call<Rule>("DELETE", `${agent(id)}/rules/${ruleId}`),
    retireDraft: (id: string, name: string) =>
      call<{ name: string; archivedTo: string | null }>(
        "DELETE",
        `${agent(id)}/skill-drafts/${encodeURIComponent(name)}`,
      ),
  };
}
