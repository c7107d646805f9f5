import type { ToolCallAudit } from "../toolhost/client/toolhost-client.js";
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

/** The toolhost client's audit record is what this table stores: one definition. */
export type ToolCallRecord = ToolCallAudit;

export type ToolCallRow = Required<Omit<ToolCallRecord, "ok">> & { id: number; ok: number; createdAt: number };

export type ToolCallsStore = ReturnType<typeof createToolCallsStore>;

export function createToolCallsStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    `INSERT INTO tool_calls (trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byTrace = db.prepare<[string], ToolCallRow>(
    `SELECT id, trace_id AS traceId, agent_id AS agentId, session_id AS sessionId, tool, args_digest AS argsDigest, ok,
       error_code AS errorCode, duration_ms AS durationMs, created_at AS createdAt
     FROM tool_calls WHERE trace_id = ? ORDER BY id`,
  );
  return {
    record(call: ToolCallRecord): void {
      insert.run(
        call.traceId ?? null,
        call.agentId,
        call.sessionId ?? null,
        call.tool,
        call.argsDigest,
        call.ok ? 1 : 0,
        call.errorCode ?? null,
        Math.round(call.durationMs),
        clock.now(),
      );
    },
    byTrace: (traceId: string): ToolCallRow[] => byTrace.all(traceId),
  };
}
