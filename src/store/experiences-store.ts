/**
 * Lessons (experiences) and their tags. Writes are additive: a lesson's text never
 * changes once stored, its status and counters do, and every status, pin or evidence
 * change goes to the memory ledger in the same transaction. Injection counters are not
 * ledgered: each injection already has its own row in experience_injections.
 */
import type { Clock } from "./clock.js";
import type { LedgerStore } from "./ledger-store.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export const EXPERIENCE_SOURCES = ["task_completion", "error_correction", "review_finding", "manual"] as const;
export const EXPERIENCE_CATEGORIES = ["pitfall", "best_practice", "pattern", "anti_pattern"] as const;
export const EXPERIENCE_STATUSES = ["draft", "active", "deprecated"] as const;
export type ExperienceSource = (typeof EXPERIENCE_SOURCES)[number];
export type ExperienceCategory = (typeof EXPERIENCE_CATEGORIES)[number];
export type ExperienceStatus = (typeof EXPERIENCE_STATUSES)[number];

export type ExperienceRow = {
  id: number;
  agentId: string;
  source: ExperienceSource;
  taskTraceId: string | null;
  summary: string;
  category: ExperienceCategory;
  confidence: number;
  status: ExperienceStatus;
  skillName: string | null;
  usageCount: number;
  lastUsedAt: number | null;
  createdBy: string;
  deprecatedReason: string | null;
  contentHash: string;
  supportCount: number;
  contradictCount: number;
  injectedCount: number;
  pinned: number;
  /** The operator who approved a lesson naming a command run from the network; null otherwise. */
  approvedBy: string | null;
  createdAt: number;
  updatedAt: number;
};

export type Experience = ExperienceRow & { tags: string[] };

export type NewExperience = {
  agentId: string;
  source: ExperienceSource;
  taskTraceId?: string;
  summary: string;
  category: ExperienceCategory;
  confidence: number;
  status?: ExperienceStatus;
  createdBy: string;
  /** Set when an operator writes a lesson that names a command run from the network. */
  approvedBy?: string;
  contentHash: string;
  tags: string[];
};

/** `exp-000123` for people; any digit count parses back. */
export function formatExperienceId(id: number): string {
  return `exp-${String(id).padStart(6, "0")}`;
}

export function parseExperienceId(text: string): number | undefined {
  const match = /^exp-(\d{1,12})$/i.exec(text.trim());
  return match ? Number(match[1]) : undefined;
}

export type ExperiencesStore = ReturnType<typeof createExperiencesStore>;

const COLUMNS = `id, agent_id AS agentId, source, task_trace_id AS taskTraceId, summary, category, confidence, status, skill_name AS skillName,
  usage_count AS usageCount, last_used_at AS lastUsedAt, created_by AS createdBy, deprecated_reason AS deprecatedReason, content_hash AS contentHash,
  support_count AS supportCount, contradict_count AS contradictCount, injected_count AS injectedCount, pinned, approved_by AS approvedBy, created_at AS createdAt, updated_at AS updatedAt`;

/** The fields a ledger entry shows of a lesson: what changes, not the counters that tick. */
function ledgerView(row: ExperienceRow): Record<string, unknown> {
  return {
    status: row.status,
    confidence: row.confidence,
    pinned: row.pinned,
    supportCount: row.supportCount,
    contradictCount: row.contradictCount,
    deprecatedReason: row.deprecatedReason,
    skillName: row.skillName,
    approvedBy: row.approvedBy,
  };
}

const INSERT = `INSERT INTO experiences (agent_id, source, task_trace_id, summary, category, confidence, status, created_by, approved_by, content_hash, created_at, updated_at)
     VALUES (@agentId, @source, @taskTraceId, @summary, @category, @confidence, @status, @createdBy, @approvedBy, @contentHash, @now, @now) RETURNING id`;
const INSERT_TAG = "INSERT INTO experience_tags (experience_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING";
const BY_ID = `SELECT ${COLUMNS} FROM experiences WHERE id = ?`;
const BY_HASH = `SELECT ${COLUMNS} FROM experiences WHERE agent_id = ? AND content_hash = ?`;
const TAGS_OF = "SELECT tag FROM experience_tags WHERE experience_id = ? ORDER BY tag";
const BY_AGENT = `SELECT ${COLUMNS} FROM experiences WHERE agent_id = ? ORDER BY id`;
const AGENTS = "SELECT DISTINCT agent_id AS agentId FROM experiences ORDER BY agent_id";
const COUNT_INJECTED = "UPDATE experiences SET injected_count = injected_count + 1 WHERE id = ?";
const COUNT_USED = "UPDATE experiences SET usage_count = usage_count + 1, last_used_at = ? WHERE id = ?";
const UPDATE = `UPDATE experiences SET status = @status, confidence = @confidence, pinned = @pinned, support_count = @supportCount, contradict_count = @contradictCount,
       deprecated_reason = @deprecatedReason, skill_name = @skillName, approved_by = @approvedBy, updated_at = @updatedAt WHERE id = @id`;

type ExperiencePatch = Partial<
  Pick<
    ExperienceRow,
    | "status"
    | "confidence"
    | "pinned"
    | "supportCount"
    | "contradictCount"
    | "deprecatedReason"
    | "skillName"
    | "approvedBy"
  >
>;

export function createExperiencesStore(sql: SqlDriver, clock: Clock, ledger: LedgerStore) {
  const withTags = async (row: ExperienceRow): Promise<Experience> => ({
    ...row,
    tags: (await sql.all<{ tag: string }>(TAGS_OF, [row.id])).map((tag) => tag.tag),
  });
  const get = async (id: number): Promise<Experience | undefined> => {
    const row = await sql.get<ExperienceRow>(BY_ID, [id]);
    return row ? withTags(row) : undefined;
  };

  /** Applies `patch` to a lesson and ledgers the change, in one transaction. */
  const change = (
    id: number,
    patch: ExperiencePatch,
    entry: { action: string; reason?: string; actor: string },
  ): Promise<Experience> =>
    sql.transaction(async () => {
      const before = await sql.get<ExperienceRow>(BY_ID, [id]);
      if (!before) throw new Error(`no lesson ${formatExperienceId(id)}`);
      const after: ExperienceRow = { ...before, ...patch, updatedAt: clock.now() };
      await sql.run(UPDATE, {
        id,
        status: after.status,
        confidence: after.confidence,
        pinned: after.pinned,
        supportCount: after.supportCount,
        contradictCount: after.contradictCount,
        deprecatedReason: after.deprecatedReason,
        skillName: after.skillName,
        approvedBy: after.approvedBy,
        updatedAt: after.updatedAt,
      });
      await ledger.append({
        agentId: before.agentId,
        subject: "experience",
        subjectId: formatExperienceId(id),
        action: entry.action,
        before: ledgerView(before),
        after: ledgerView(after),
        ...(entry.reason ? { reason: entry.reason } : {}),
        actor: entry.actor,
      });
      return withTags(after);
    });

  return {
    add: (lesson: NewExperience): Promise<Experience> =>
      sql.transaction(async () => {
        const inserted = await sql.get<{ id: number }>(INSERT, {
          agentId: lesson.agentId,
          source: lesson.source,
          taskTraceId: lesson.taskTraceId ?? null,
          summary: lesson.summary,
          category: lesson.category,
          confidence: lesson.confidence,
          status: lesson.status ?? "draft",
          createdBy: lesson.createdBy,
          approvedBy: lesson.approvedBy ?? null,
          contentHash: lesson.contentHash,
          now: clock.now(),
        });
        const id = Number(inserted?.id);
        for (const tag of lesson.tags) await sql.run(INSERT_TAG, [id, tag]);
        const created = (await get(id)) as Experience;
        await ledger.append({
          agentId: lesson.agentId,
          subject: "experience",
          subjectId: formatExperienceId(id),
          action: "create",
          after: { ...ledgerView(created), summary: created.summary, tags: created.tags, source: created.source },
          actor: lesson.createdBy,
        });
        return created;
      }),
    get,
    byHash: async (agentId: string, hash: string): Promise<Experience | undefined> => {
      const row = await sql.get<ExperienceRow>(BY_HASH, [agentId, hash]);
      return row ? withTags(row) : undefined;
    },
    list: async (agentId: string, status?: ExperienceStatus): Promise<Experience[]> => {
      const rows = (await sql.all<ExperienceRow>(BY_AGENT, [agentId])).filter(
        (row) => !status || row.status === status,
      );
      const lessons: Experience[] = [];
      for (const row of rows) lessons.push(await withTags(row));
      return lessons;
    },
    agents: async (): Promise<string[]> => (await sql.all<{ agentId: string }>(AGENTS)).map((row) => row.agentId),
    change,
    countInjected: async (id: number): Promise<void> => void (await sql.run(COUNT_INJECTED, [id])),
    countUsed: async (id: number): Promise<void> => void (await sql.run(COUNT_USED, [clock.now(), id])),
  };
}
