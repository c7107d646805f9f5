/**
 * What the admin routes do, over injected collaborators: the agents, the store (library
 * switch, gap clusters, drafts) and the operator's maintenance toolhosts, through which
 * every read and write inside an agent's tree goes. Every operation works whether the
 * agent's library is switched on or off: an operator tidies before enabling.
 */
import { basename, join } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import { agentGapReport, REPORT_CLUSTER_LIMIT, type AgentGapReport } from "../agent/gaps/gap-report.js";
import { INDEX_FILE } from "../knowledge/library/library-doc.js";
import type { MaintenancePool } from "../runtime/library-maintenance.js";
import { OperatorCallError } from "../runtime/operator-files.js";
import type { Clock } from "../store/clock.js";
import type { ExperienceStatus } from "../store/experiences-store.js";
import type { Store } from "../store/store.js";
import { describeToolCall, type ToolCallRow } from "../store/tool-calls-store.js";
import type { OperatorDoc } from "../toolhost/tools/operator-tools.js";
import { AdminError } from "./admin-errors.js";
import { createAdminLessons, type LessonAction, type LessonCounts } from "./admin-lessons.js";
import { createAdminRules } from "./admin-rules.js";
import { agentMcpView, type AgentMcpView, type BotToolhosts } from "./mcp-view.js";

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
export type DraftDetail = { name: string; intentKey: string; status: string; path: string; content: string };
export type LibraryListing = { enabled: boolean; docs: OperatorDoc[]; indexContent: string };
export type RetiredDraft = { name: string; intentKey: string; archivedTo: string | null };
/** What the probe says: `ok` is false when the database does not answer (a load balancer takes the replica out). */
export type Health = {
  ok: boolean;
  version: string;
  replica: {
    name: string;
    database: { engine: string; roundTripMs: number | null; error?: string };
    leases?: string[];
    liveReplicas?: string[];
  };
  agents?: string[];
  channels?: string[];
  sandbox?: string;
};

export type AdminService = ReturnType<typeof createAdminService>;

export function createAdminService(options: {
  agents: AgentDefinition[];
  store: Store;
  maintenance: MaintenancePool;
  clock: Clock;
  version: string;
  channels: string[];
  defaultLookbackHours: number;
  /** ADMIN_DOC_MAX_BYTES: the largest file of an agent's tree the API reads. */
  docMaxBytes: number;
  /** This process's replica name (REPLICA_NAME, or host:pid) and REPLICA_LEASE_MS. */
  replica: { name: string; leaseMs: number };
  /**
   * The running bot's toolhosts, once the bot in this process has them (`laoding start`);
   * undefined under `laoding admin`, which runs apart from any bot.
   */
  botToolhosts?: () => BotToolhosts | undefined;
}) {
  const { store, maintenance } = options;
  const lessons = createAdminLessons(store);
  const rules = createAdminRules(store, options.clock);
  const agentOf = (id: string): AgentDefinition => {
    const agent = options.agents.find((candidate) => candidate.id === id);
    if (!agent) throw new AdminError("AGENT_NOT_FOUND", `no agent "${id}"; GET /v1/agents lists them`);
    return agent;
  };
  const enabled = async (agent: AgentDefinition) =>
    (await store.agentSettings.experienceLibrary(agent.id)) ?? agent.experienceLibrary;
  const library = (agent: AgentDefinition) => maintenance.agent(agent.id);
  const docPath = (agent: AgentDefinition, fileName: string) => join(library(agent).trees.experienceDir, fileName);
  const liveDraft = async (agent: AgentDefinition, name: string) => {
    const draft = (await store.clusters.drafts(agent.id)).find(
      (row) => row.skillName === name && row.status !== "rejected",
    );
    if (!draft)
      throw new AdminError(
        "DRAFT_NOT_FOUND",
        `agent ${agent.id} has no live skill draft named "${name}"; GET /v1/agents/${agent.id}/capability-gaps lists its drafts`,
      );
    return draft;
  };
  /**
   * Reads a file of the agent's tree through its toolhost, after a stat through the same
   * toolhost: a file over ADMIN_DOC_MAX_BYTES (a sparse one an agent planted reports its
   * full size) is refused before a byte of it is read. A link is refused too, since the
   * stat sees the link, not what it leads to; documents and drafts are regular files.
   */
  const readCapped = async (
    agent: AgentDefinition,
    path: string,
    within: string,
    name?: string,
    missing: MissingCode = "DOC_NOT_FOUND",
  ): Promise<Buffer> => {
    const [found] = await toolhost(() => library(agent).files.stat([path]));
    const label = name ?? basename(path);
    if (found && "type" in found && found.type === "link")
      throw new AdminError(
        "PATH_NOT_ALLOWED",
        `"${label}" is a link; the admin API reads only regular files and never follows a link`,
      );
    const tooLarge = (what: string) =>
      new AdminError(
        "DOC_TOO_LARGE",
        `"${label}" ${what}; the admin API reads files of at most ${options.docMaxBytes} bytes (raise ADMIN_DOC_MAX_BYTES to read it, or open it on the host)`,
      );
    if (found && "type" in found && found.type === "file" && (found.sizeBytes ?? 0) > options.docMaxBytes)
      throw tooLarge(`is ${found.sizeBytes} bytes`);
    try {
      // The cap goes along: a file swapped in between the stat and the read is refused by the child.
      return await toolhost(() => library(agent).files.readFile(path, within, options.docMaxBytes), name, missing);
    } catch (error) {
      if (error instanceof AdminError && error.code === "BODY_TOO_LARGE")
        throw tooLarge("grew past the limit while it was read");
      throw error;
    }
  };

  return {
    async health(full: boolean): Promise<Health> {
      const started = performance.now();
      const replica: Health["replica"] = {
        name: options.replica.name,
        database: { engine: store.engine, roundTripMs: null },
      };
      try {
        await store.sql.get("SELECT 1 AS one");
        replica.database.roundTripMs = Math.round((performance.now() - started) * 100) / 100;
        if (full) {
          replica.leases = (await store.leases.heldBy(options.replica.name)).map((lease) => lease.name);
          replica.liveReplicas = (await store.replicas.live(options.replica.leaseMs)).map((row) => row.name);
        }
      } catch (error) {
        // Named for the operator; the server's words stay in the log (they may name hosts).
        replica.database.error = "the database does not answer";
        if (full) replica.database.error = `the database does not answer: ${(error as Error).message}`;
      }
      const ok = replica.database.roundTripMs !== null;
      if (!full) return { ok, version: options.version, replica };
      return {
        ok,
        version: options.version,
        replica,
        agents: options.agents.map((agent) => agent.id),
        channels: options.channels,
        sandbox: maintenance.sandbox,
      };
    },
    async listAgents(): Promise<AgentSummary[]> {
      return Promise.all(
        options.agents.map(async (agent) => {
          // Within the default lookback, as `laoding gaps` counts them.
          const since = options.clock.now() - options.defaultLookbackHours * 3_600_000;
          const drafts = await store.clusters.drafts(agent.id);
          const handled = new Set(drafts.map((draft) => draft.intentKey));
          return {
            id: agent.id,
            name: agent.name,
            libraryEnabled: await enabled(agent),
            documentCount: await toolhost(() => library(agent).files.libraryCount()),
            gapCount: await store.gaps.countSince(agent.id, since),
            // Open: a cluster nobody has drafted for yet (a retired draft's tombstone closes it too).
            // Environment clusters (an outage, keyed by its cause) are never drafted: they are not open work.
            openClusterCount: (await store.clusters.top(agent.id, since, REPORT_CLUSTER_LIMIT)).filter(
              (cluster) => cluster.gapClass !== "environment" && !handled.has(cluster.intentKey),
            ).length,
            draftCount: drafts.filter((draft) => draft.status === "drafted").length,
            lessonCounts: await lessons.counts(agent.id),
          };
        }),
      );
    },
    async setLibrary(agentId: string, on: boolean): Promise<{ id: string; libraryEnabled: boolean }> {
      const agent = agentOf(agentId);
      await store.agentSettings.setExperienceLibrary(agent.id, on);
      return { id: agent.id, libraryEnabled: await enabled(agent) };
    },
    async listDocs(agentId: string): Promise<LibraryListing> {
      const agent = agentOf(agentId);
      const files = library(agent).files;
      const docs = await toolhost(() => files.libraryDocs());
      const indexContent = (
        await readCapped(agent, docPath(agent, INDEX_FILE), library(agent).trees.experienceDir)
      ).toString("utf8");
      return { enabled: await enabled(agent), docs, indexContent };
    },
    async readDoc(agentId: string, fileName: string): Promise<{ fileName: string; content: string }> {
      const agent = agentOf(agentId);
      const bytes = await readCapped(agent, docPath(agent, fileName), library(agent).trees.experienceDir, fileName);
      return { fileName, content: bytes.toString("utf8") };
    },
    async writeDoc(
      agentId: string,
      fileName: string,
      content: string,
    ): Promise<{ fileName: string; created: boolean; sizeBytes: number; index: string }> {
      const agent = agentOf(agentId);
      const bytes = Buffer.from(content, "utf8");
      const written = await toolhost(
        () =>
          library(agent).files.writeFile(docPath(agent, fileName), bytes, {
            within: library(agent).trees.experienceDir,
          }),
        fileName,
      );
      const index = await toolhost(() => library(agent).refresh(false));
      return { fileName, created: written.startsWith("created"), sizeBytes: bytes.length, index };
    },
    async deleteDoc(agentId: string, fileName: string): Promise<{ fileName: string; deleted: true; index: string }> {
      const agent = agentOf(agentId);
      await toolhost(
        () => library(agent).files.deleteFile(docPath(agent, fileName), library(agent).trees.experienceDir),
        fileName,
      );
      const index = await toolhost(() => library(agent).refresh(false));
      return { fileName, deleted: true, index };
    },
    async rebuildIndex(agentId: string): Promise<{ report: string; documentCount: number }> {
      const agent = agentOf(agentId);
      const report = await toolhost(() => library(agent).refresh(true));
      return { report, documentCount: await toolhost(() => library(agent).files.libraryCount()) };
    },
    async capabilityGaps(
      agentId: string,
      sinceHours: number | undefined,
    ): Promise<AgentGapReport & { sinceHours: number }> {
      const agent = agentOf(agentId);
      const hours = sinceHours ?? options.defaultLookbackHours;
      return {
        ...(await agentGapReport(store.clusters, agent.id, options.clock.now() - hours * 3_600_000)),
        sinceHours: hours,
      };
    },
    /**
     * The agent's tool calls from the audit trail, newest first (or one trace's, in order):
     * each with its outcome, and in words, `outcome unknown (the bot stopped)` for a call
     * whose process stopped before its outcome was written (issue 29).
     */
    async toolCalls(
      agentId: string,
      query: { traceId?: string | undefined; limit: number },
    ): Promise<{ agent: string; calls: (ToolCallRow & { outcomeText: string })[] }> {
      const agent = agentOf(agentId);
      const rows =
        query.traceId === undefined
          ? await store.toolCalls.recent(agent.id, query.limit)
          : (await store.toolCalls.byTrace(query.traceId))
              .filter((row) => row.agentId === agent.id)
              .slice(0, query.limit);
      return { agent: agent.id, calls: rows.map((row) => ({ ...row, outcomeText: describeToolCall(row) })) };
    },
    listLessons: (agentId: string, status: ExperienceStatus | undefined) => lessons.list(agentOf(agentId).id, status),
    lessonDetail: (agentId: string, lessonId: string) => lessons.detail(agentOf(agentId).id, lessonId),
    lessonAction: (agentId: string, lessonId: string, action: LessonAction, reason?: string) =>
      lessons.act(agentOf(agentId).id, lessonId, action, reason),
    effectReport: (agentId: string) => lessons.report(agentOf(agentId).id),
    listRules: (agentId: string) => rules.list(agentOf(agentId).id),
    ruleCandidates: (agentId: string) => rules.candidates(agentOf(agentId).id),
    acceptRule: (agentId: string, candidateId: string, text: string | undefined) =>
      rules.accept(agentOf(agentId).id, candidateId, text),
    removeRule: (agentId: string, ruleId: number) => rules.remove(agentOf(agentId).id, ruleId),
    /**
     * The agent's MCP servers: agents.json's, with the live status of the bot's child when
     * it runs. Asking never starts a child (mcpStatus answers undefined instead).
     */
    async mcpServers(agentId: string): Promise<AgentMcpView> {
      const agent = agentOf(agentId);
      const toolhosts = options.botToolhosts?.();
      if (!toolhosts) return agentMcpView(agent, undefined, false);
      let live: Awaited<ReturnType<ReturnType<BotToolhosts["client"]>["mcpStatus"]>>;
      try {
        live = await toolhosts.client(agent.id).mcpStatus();
      } catch (error) {
        throw new AdminError(
          "TOOLHOST_FAILED",
          `agent ${agent.id}'s toolhost did not report its MCP servers: ${(error as Error).message}; try again, or see the bot's log (laoding logs)`,
          { cause: error },
        );
      }
      return agentMcpView(agent, live, true);
    },
    /** A live draft's row and its SKILL.md text, read through the agent's toolhost. */
    async readDraft(agentId: string, name: string): Promise<DraftDetail> {
      const agent = agentOf(agentId);
      const draft = await liveDraft(agent, name);
      const path = join(library(agent).trees.skillsDir, name, "SKILL.md");
      const bytes = await readCapped(agent, path, library(agent).trees.skillsDir, name, "DRAFT_NOT_FOUND");
      return { name, intentKey: draft.intentKey, status: draft.status, path, content: bytes.toString("utf8") };
    },
    /**
     * Retires a draft: its folder moves to `agents/<A>/archive/skills/<date>-<name>` and its
     * row stays as a tombstone (status rejected), so the gap loop does not draft it again.
     */
    async retireDraft(agentId: string, name: string): Promise<RetiredDraft> {
      const agent = agentOf(agentId);
      const draft = await liveDraft(agent, name);
      const trees = library(agent).trees;
      const folder = join(trees.skillsDir, name);
      const [found] = await toolhost(() => library(agent).files.stat([folder]));
      let archivedTo: string | null = null;
      if (found && "type" in found && found.type === "dir") {
        const stamp = new Date(options.clock.now()).toISOString();
        const base = join(trees.privateDir, "archive", "skills", `${stamp.slice(0, 10)}-${name}`);
        const [taken] = await toolhost(() => library(agent).files.stat([base]));
        archivedTo =
          taken && "type" in taken && taken.type === "missing"
            ? base
            : `${base}-${stamp.slice(11, 19).replaceAll(":", "")}`;
        const target = archivedTo;
        await toolhost(() => library(agent).files.move(folder, target));
      }
      const date = new Date(options.clock.now()).toISOString().slice(0, 10);
      await store.clusters.settleDraft(agent.id, draft.intentKey, {
        status: "rejected",
        skillName: name,
        ...(archivedTo ? { path: archivedTo } : {}),
        reason: `retired by an operator on ${date}${archivedTo ? `; archived at ${archivedTo}` : "; its folder was already gone"}`,
      });
      return { name, intentKey: draft.intentKey, archivedTo };
    },
  };
}

type MissingCode = "DOC_NOT_FOUND" | "DRAFT_NOT_FOUND";

/** Runs a toolhost call, mapping its failures to admin errors (a missing document is a 404). */
async function toolhost<T>(
  run: () => Promise<T>,
  fileName?: string,
  missing: MissingCode = "DOC_NOT_FOUND",
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OperatorCallError))
      throw new AdminError("TOOLHOST_FAILED", `the agent's toolhost failed: ${(error as Error).message}`, {
        cause: error,
      });
    if (error.code === "PATH_NOT_FOUND" && fileName) {
      throw new AdminError(
        missing,
        missing === "DOC_NOT_FOUND"
          ? `no document "${fileName}" in this library; GET .../experience-library/docs lists them`
          : `the draft "${fileName}" has no SKILL.md any more`,
      );
    }
    if (error.code === "PATH_NOT_ALLOWED")
      throw new AdminError(
        "PATH_NOT_ALLOWED",
        `refused by the agent's sandbox: ${error.message} (a link that leads out of the library is never followed)`,
      );
    if (error.code === "FILE_TOO_LARGE") throw new AdminError("BODY_TOO_LARGE", error.message);
    throw new AdminError("TOOLHOST_FAILED", `the agent's toolhost refused: ${error.message}`, { cause: error });
  }
}
