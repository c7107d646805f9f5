/**
 * One row per settled task and distiller prompt version: the idempotency key of Level 1
 * distillation, with the gate that skipped it or what the model's operations came to.
 */
import type { Clock } from "./clock.js";
import type { TaskOutcome } from "./injections-store.js";
import type { Db } from "./open-database.js";

export type DistillRunStatus = "skipped" | "distilled" | "failed";

export type DistillRun = {
  agentId: string;
  traceId: string;
  promptVersion: number;
  status: DistillRunStatus;
  skipReason?: string;
  source?: string;
  outcome: TaskOutcome;
  tags: string[];
  operations?: number;
  refused?: number;
  phantomCitations?: number;
  tokens?: number;
};

export type DistillRunRow = { id: number; agentId: string; traceId: string; promptVersion: number; status: DistillRunStatus; skipReason: string | null; source: string | null; outcome: TaskOutcome | null; tags: string; operations: number; refused: number; phantomCitations: number; tokens: number; createdAt: number };

export type DistillRunsStore = ReturnType<typeof createDistillRunsStore>;

const COLUMNS = `id, agent_id AS agentId, trace_id AS traceId, prompt_version AS promptVersion, status, skip_reason AS skipReason, source, outcome, tags,
  operations, refused, phantom_citations AS phantomCitations, tokens, created_at AS createdAt`;

export function createDistillRunsStore(db: Db, clock: Clock) {
  const upsert = db.prepare(
    `INSERT INTO distill_runs (agent_id, trace_id, prompt_version, status, skip_reason, source, outcome, tags, operations, refused, phantom_citations, tokens, created_at)
     VALUES (@agentId, @traceId, @promptVersion, @status, @skipReason, @source, @outcome, @tags, @operations, @refused, @phantomCitations, @tokens, @now)
     ON CONFLICT (trace_id, prompt_version) DO UPDATE SET status = excluded.status, skip_reason = excluded.skip_reason, source = excluded.source,
       outcome = excluded.outcome, operations = excluded.operations, refused = excluded.refused, tokens = excluded.tokens`,
  );
  const get = db.prepare<[string, number], DistillRunRow>(`SELECT ${COLUMNS} FROM distill_runs WHERE trace_id = ? AND prompt_version = ?`);
  const byAgent = db.prepare<[string, number], DistillRunRow>(`SELECT ${COLUMNS} FROM distill_runs WHERE agent_id = ? AND created_at >= ? ORDER BY id`);
  return {
    record(run: DistillRun): void {
      upsert.run({
        ...run,
        skipReason: run.skipReason ?? null,
        source: run.source ?? null,
        tags: run.tags.join(" "),
        operations: run.operations ?? 0,
        refused: run.refused ?? 0,
        phantomCitations: run.phantomCitations ?? 0,
        tokens: run.tokens ?? 0,
        now: clock.now(),
      });
    },
    get: (traceId: string, promptVersion: number): DistillRunRow | undefined => get.get(traceId, promptVersion),
    byAgent: (agentId: string, sinceMs = 0): DistillRunRow[] => byAgent.all(agentId, sinceMs),
  };
}
