import type { Clock } from "./clock.js";
import { CAUSE_DETAIL_MAX_CHARS, ENVIRONMENT_CAUSE_SQL, type EnvironmentCause } from "./gap-causes.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type GapClass = "capability" | "environment";

export type NewGap = {
  agentId: string;
  /** The key as routing or extraction gave it, before merging into a known key. */
  rawIntentKey?: string;
  sessionId?: number;
  traceId: string;
  intentKey: string;
  reason: string;
  gapClass: GapClass;
  tool?: string;
  errorCode?: string;
  detail?: string;
  userText?: string;
  userId?: string;
};

export type GapRow = {
  id: number;
  agentId: string;
  sessionId: number | null;
  traceId: string;
  intentKey: string;
  rawIntentKey: string | null;
  reason: string;
  gapClass: GapClass;
  tool: string | null;
  errorCode: string | null;
  detail: string | null;
  userText: string | null;
  userId: string | null;
  createdAt: number;
};

/** User text kept with a gap is capped: enough to recognise the request, not a transcript. */
export const GAP_USER_TEXT_MAX_CHARS = 500;
export const GAP_DETAIL_MAX_CHARS = CAUSE_DETAIL_MAX_CHARS;

export type GapsStore = ReturnType<typeof createGapsStore>;

const COLUMNS = `id, agent_id AS agentId, session_id AS sessionId, trace_id AS traceId, intent_key AS intentKey, raw_intent_key AS rawIntentKey, reason,
  class AS gapClass, tool, error_code AS errorCode, detail, user_text AS userText, user_id AS userId, created_at AS createdAt`;

const INSERT = `INSERT INTO capability_gaps (agent_id, session_id, trace_id, intent_key, raw_intent_key, reason, class, tool, error_code, detail, user_text, user_id, created_at)
  VALUES (@agentId, @sessionId, @traceId, @intentKey, @rawIntentKey, @reason, @gapClass, @tool, @errorCode, @detail, @userText, @userId, @createdAt)
  RETURNING id`;
const BY_ID = `SELECT ${COLUMNS} FROM capability_gaps WHERE id = ?`;
const BY_TRACE = `SELECT ${COLUMNS} FROM capability_gaps WHERE trace_id = ? ORDER BY id`;
const RECENT = `SELECT ${COLUMNS} FROM capability_gaps WHERE agent_id = ? AND created_at >= ? ORDER BY id DESC LIMIT ?`;
const COUNT_SINCE = `SELECT count(*) AS count FROM capability_gaps WHERE agent_id = ? AND created_at >= ?`;
const COUNT_CAUSE_SINCE = `SELECT count(*) AS count FROM capability_gaps
  WHERE agent_id = ? AND created_at >= ? AND class = 'environment' AND ${ENVIRONMENT_CAUSE_SQL} = ?`;

export function createGapsStore(sql: SqlDriver, clock: Clock) {
  const run = async (gap: NewGap, createdAt: number): Promise<number> => {
    const row = await sql.get<{ id: number }>(INSERT, {
      agentId: gap.agentId,
      sessionId: gap.sessionId ?? null,
      traceId: gap.traceId,
      intentKey: gap.intentKey,
      rawIntentKey: gap.rawIntentKey ?? null,
      reason: gap.reason,
      gapClass: gap.gapClass,
      tool: gap.tool ?? null,
      errorCode: gap.errorCode ?? null,
      detail: gap.detail?.slice(0, GAP_DETAIL_MAX_CHARS) ?? null,
      userText: gap.userText?.slice(0, GAP_USER_TEXT_MAX_CHARS) ?? null,
      userId: gap.userId ?? null,
      createdAt,
    });
    return (row as { id: number }).id;
  };

  return {
    record: (gap: NewGap): Promise<number> => run(gap, clock.now()),
    /** A gap from another install with its own time (`laoding import go`), so it counts in its cluster's window. */
    importRow: (gap: NewGap & { createdAt: number }): Promise<number> => run(gap, gap.createdAt),
    get: (id: number): Promise<GapRow | undefined> => sql.get<GapRow>(BY_ID, [id]),
    byTrace: (traceId: string): Promise<GapRow[]> => sql.all<GapRow>(BY_TRACE, [traceId]),
    recent: (agentId: string, sinceMs: number, limit = 100): Promise<GapRow[]> =>
      sql.all<GapRow>(RECENT, [agentId, sinceMs, limit]),
    /** How many gaps an agent recorded since a time (an index range scan of gaps_recent). */
    countSince: async (agentId: string, sinceMs: number): Promise<number> =>
      (await sql.get<{ count: number }>(COUNT_SINCE, [agentId, sinceMs]))?.count ?? 0,
    /** How many environment gaps of one cause an agent recorded since a time (rows keyed by older versions included). */
    countCauseSince: async (agentId: string, cause: EnvironmentCause, sinceMs: number): Promise<number> =>
      (await sql.get<{ count: number }>(COUNT_CAUSE_SINCE, [agentId, sinceMs, cause]))?.count ?? 0,
  };
}
