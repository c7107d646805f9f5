import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

export type ModelCallRecord = {
  traceId?: string;
  agentId?: string;
  purpose: string;
  model: string;
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  ok: boolean;
  errorKind?: string;
  durationMs: number;
};

export type ModelCallRow = { purpose: string; model: string; promptTokens: number | null; completionTokens: number | null; totalTokens: number | null; ok: number; errorKind: string | null };

export type ModelCallsStore = ReturnType<typeof createModelCallsStore>;

export function createModelCallsStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    `INSERT INTO model_calls (trace_id, agent_id, purpose, model, prompt_tokens, completion_tokens, total_tokens, ok, error_kind, duration_ms, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byTrace = db.prepare<[string], ModelCallRow>(
    `SELECT purpose, model, prompt_tokens AS promptTokens, completion_tokens AS completionTokens, total_tokens AS totalTokens, ok, error_kind AS errorKind
     FROM model_calls WHERE trace_id = ? ORDER BY id`,
  );
  return {
    record(call: ModelCallRecord): void {
      insert.run(call.traceId ?? null, call.agentId ?? null, call.purpose, call.model, call.promptTokens ?? null, call.completionTokens ?? null, call.totalTokens ?? null, call.ok ? 1 : 0, call.errorKind ?? null, Math.round(call.durationMs), clock.now());
    },
    byTrace: (traceId: string): ModelCallRow[] => byTrace.all(traceId),
  };
}
