import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

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
export const GAP_DETAIL_MAX_CHARS = 1_000;

export type GapsStore = ReturnType<typeof createGapsStore>;

const COLUMNS = `id, agent_id AS agentId, session_id AS sessionId, trace_id AS traceId, intent_key AS intentKey, raw_intent_key AS rawIntentKey, reason,
  class AS gapClass, tool, error_code AS errorCode, detail, user_text AS userText, user_id AS userId, created_at AS createdAt`;

export function createGapsStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    `INSERT INTO capability_gaps (agent_id, session_id, trace_id, intent_key, raw_intent_key, reason, class, tool, error_code, detail, user_text, user_id, created_at)
     VALUES (@agentId, @sessionId, @traceId, @intentKey, @rawIntentKey, @reason, @gapClass, @tool, @errorCode, @detail, @userText, @userId, @createdAt)`,
  );
  const byId = db.prepare<[number], GapRow>(`SELECT ${COLUMNS} FROM capability_gaps WHERE id = ?`);
  const byTrace = db.prepare<[string], GapRow>(`SELECT ${COLUMNS} FROM capability_gaps WHERE trace_id = ? ORDER BY id`);
  const recent = db.prepare<[string, number, number], GapRow>(
    `SELECT ${COLUMNS} FROM capability_gaps WHERE agent_id = ? AND created_at >= ? ORDER BY id DESC LIMIT ?`,
  );
  const countSince = db.prepare<[string, number], { count: number }>(`SELECT count(*) AS count FROM capability_gaps WHERE agent_id = ? AND created_at >= ?`);

  const run = (gap: NewGap, createdAt: number): number =>
    Number(
      insert.run({
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
      }).lastInsertRowid,
    );

  return {
    record: (gap: NewGap): number => run(gap, clock.now()),
    /** A gap from another install with its own time (`laoding import go`), so it counts in its cluster's window. */
    importRow: (gap: NewGap & { createdAt: number }): number => run(gap, gap.createdAt),
    get: (id: number): GapRow | undefined => byId.get(id),
    byTrace: (traceId: string): GapRow[] => byTrace.all(traceId),
    recent: (agentId: string, sinceMs: number, limit = 100): GapRow[] => recent.all(agentId, sinceMs, limit),
    /** How many gaps an agent recorded since a time (an index range scan of gaps_recent). */
    countSince: (agentId: string, sinceMs: number): number => countSince.get(agentId, sinceMs)?.count ?? 0,
  };
}
