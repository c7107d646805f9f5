/**
 * One row per settled task and distiller prompt version: the idempotency key of Level 1
 * distillation, with the gate that skipped it or what the model's operations came to.
 */
import type { Clock } from "./clock.js";
import type { TaskOutcome, TaskOutcomeKind } from "./injections-store.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type DistillRunStatus = "skipped" | "distilled" | "failed";

export type DistillRun = {
  agentId: string;
  traceId: string;
  promptVersion: number;
  status: DistillRunStatus;
  skipReason?: string;
  source?: string;
  /** Null for an environment failure: the task is evidence for nothing. */
  outcome: TaskOutcome | null;
  outcomeKind?: TaskOutcomeKind;
  tags: string[];
  operations?: number;
  refused?: number;
  phantomCitations?: number;
  tokens?: number;
};

export type DistillRunRow = {
  id: number;
  agentId: string;
  traceId: string;
  promptVersion: number;
  status: DistillRunStatus;
  skipReason: string | null;
  source: string | null;
  outcome: TaskOutcome | null;
  outcomeKind: TaskOutcomeKind | null;
  tags: string;
  operations: number;
  refused: number;
  phantomCitations: number;
  tokens: number;
  createdAt: number;
};

export type DistillRunsStore = ReturnType<typeof createDistillRunsStore>;

const COLUMNS = `id, agent_id AS agentId, trace_id AS traceId, prompt_version AS promptVersion, status, skip_reason AS skipReason, source, outcome, outcome_kind AS outcomeKind, tags,
  operations, refused, phantom_citations AS phantomCitations, tokens, created_at AS createdAt`;

const UPSERT = `INSERT INTO distill_runs (agent_id, trace_id, prompt_version, status, skip_reason, source, outcome, outcome_kind, tags, operations, refused, phantom_citations, tokens, created_at)
     VALUES (@agentId, @traceId, @promptVersion, @status, @skipReason, @source, @outcome, @outcomeKind, @tags, @operations, @refused, @phantomCitations, @tokens, @now)
     ON CONFLICT (trace_id, prompt_version) DO UPDATE SET status = excluded.status, skip_reason = excluded.skip_reason, source = excluded.source,
       outcome = excluded.outcome, outcome_kind = excluded.outcome_kind, operations = excluded.operations, refused = excluded.refused, tokens = excluded.tokens`;
const GET = `SELECT ${COLUMNS} FROM distill_runs WHERE trace_id = ? AND prompt_version = ?`;
const BY_AGENT = `SELECT ${COLUMNS} FROM distill_runs WHERE agent_id = ? AND created_at >= ? ORDER BY id`;

export function createDistillRunsStore(sql: SqlDriver, clock: Clock) {
  return {
    async record(run: DistillRun): Promise<void> {
      await sql.run(UPSERT, {
        agentId: run.agentId,
        traceId: run.traceId,
        promptVersion: run.promptVersion,
        status: run.status,
        skipReason: run.skipReason ?? null,
        source: run.source ?? null,
        outcome: run.outcome,
        outcomeKind: run.outcomeKind ?? (run.outcome === "failure" ? null : run.outcome),
        tags: run.tags.join(" "),
        operations: run.operations ?? 0,
        refused: run.refused ?? 0,
        phantomCitations: run.phantomCitations ?? 0,
        tokens: run.tokens ?? 0,
        now: clock.now(),
      });
    },
    get: (traceId: string, promptVersion: number): Promise<DistillRunRow | undefined> =>
      sql.get<DistillRunRow>(GET, [traceId, promptVersion]),
    byAgent: (agentId: string, sinceMs = 0): Promise<DistillRunRow[]> =>
      sql.all<DistillRunRow>(BY_AGENT, [agentId, sinceMs]),
  };
}
