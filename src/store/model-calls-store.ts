import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

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

export type ModelCallRow = {
  purpose: string;
  model: string;
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  ok: number;
  errorKind: string | null;
};

export type ModelCallsStore = ReturnType<typeof createModelCallsStore>;

const INSERT = `INSERT INTO model_calls (trace_id, agent_id, purpose, model, prompt_tokens, completion_tokens, total_tokens, ok, error_kind, duration_ms, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const BY_TRACE = `SELECT purpose, model, prompt_tokens AS promptTokens, completion_tokens AS completionTokens, total_tokens AS totalTokens, ok, error_kind AS errorKind
  FROM model_calls WHERE trace_id = ? ORDER BY id`;

export function createModelCallsStore(sql: SqlDriver, clock: Clock) {
  return {
    async record(call: ModelCallRecord): Promise<void> {
      await sql.run(INSERT, [
        call.traceId ?? null,
        call.agentId ?? null,
        call.purpose,
        call.model,
        call.promptTokens ?? null,
        call.completionTokens ?? null,
        call.totalTokens ?? null,
        call.ok ? 1 : 0,
        call.errorKind ?? null,
        Math.round(call.durationMs),
        clock.now(),
      ]);
    },
    byTrace: (traceId: string): Promise<ModelCallRow[]> => sql.all<ModelCallRow>(BY_TRACE, [traceId]),
  };
}
