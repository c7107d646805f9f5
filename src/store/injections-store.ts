/**
 * Which lessons were selected for which task, in which arm, whether the answer cited
 * them and how the task ended. Adoption, promotion, deprecation and the effect report
 * are all computed from these rows, never from the distiller's opinion.
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type InjectionArm = "treatment" | "holdout";
export type TaskOutcome = "success" | "failure";
/**
 * How a task ended, as the system saw it. `environment` (the model or a host failed) has
 * no outcome: it is evidence for or against nothing.
 */
export type TaskOutcomeKind =
  | "success"
  | "corrected"
  | "negative_feedback"
  | "failed_tool"
  | "step_budget"
  /** The model said it cannot do the task (report_gap). */
  | "reported"
  | "abandoned"
  | "environment";

export type InjectionRow = {
  id: number;
  agentId: string;
  traceId: string;
  experienceId: number;
  rank: number;
  arm: InjectionArm;
  cited: number;
  /** Null until the task settles, and for good when it ended in an environment failure. */
  outcome: TaskOutcome | null;
  outcomeKind: TaskOutcomeKind | null;
  createdAt: number;
};

export type InjectionsStore = ReturnType<typeof createInjectionsStore>;

const COLUMNS =
  "id, agent_id AS agentId, trace_id AS traceId, experience_id AS experienceId, rank, arm, cited, outcome, outcome_kind AS outcomeKind, created_at AS createdAt";

const INSERT =
  "INSERT INTO experience_injections (agent_id, trace_id, experience_id, rank, arm, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING";
const CITE =
  "UPDATE experience_injections SET cited = 1 WHERE trace_id = ? AND experience_id = ? AND arm = 'treatment'";
const SETTLE = "UPDATE experience_injections SET outcome = ?, outcome_kind = ? WHERE trace_id = ?";
const BY_TRACE = `SELECT ${COLUMNS} FROM experience_injections WHERE trace_id = ? ORDER BY rank`;
const BY_EXPERIENCE = `SELECT ${COLUMNS} FROM experience_injections WHERE experience_id = ? ORDER BY id`;
const BY_AGENT = `SELECT ${COLUMNS} FROM experience_injections WHERE agent_id = ? AND created_at >= ? ORDER BY id`;
// A holdout task once, with the tags its settlement recorded, in the order of its first
// injection row (PostgreSQL refuses SELECT DISTINCT ordered by a column it does not select).
const HOLDOUT_TASKS = `SELECT i.trace_id AS traceId, i.outcome, r.tags FROM experience_injections i LEFT JOIN distill_runs r ON r.trace_id = i.trace_id
     WHERE i.agent_id = ? AND i.arm = 'holdout' AND i.outcome IS NOT NULL GROUP BY i.trace_id, i.outcome, r.tags ORDER BY MIN(i.id)`;

export function createInjectionsStore(sql: SqlDriver, clock: Clock) {
  return {
    holdoutTasks: async (agentId: string): Promise<{ traceId: string; outcome: TaskOutcome; tags: string[] }[]> =>
      (await sql.all<{ traceId: string; outcome: TaskOutcome; tags: string | null }>(HOLDOUT_TASKS, [agentId])).map(
        (row) => ({ traceId: row.traceId, outcome: row.outcome, tags: (row.tags ?? "").split(" ").filter(Boolean) }),
      ),
    record: (agentId: string, traceId: string, arm: InjectionArm, experienceIds: number[]): Promise<void> =>
      sql.transaction(async () => {
        for (const [index, experienceId] of experienceIds.entries())
          await sql.run(INSERT, [agentId, traceId, experienceId, index + 1, arm, clock.now()]);
      }),
    /** Marks the cited lessons of a treatment task; returns the ids that were really injected. */
    cite: (traceId: string, experienceIds: number[]): Promise<number[]> =>
      sql.transaction(async () => {
        const cited: number[] = [];
        for (const id of experienceIds) if ((await sql.run(CITE, [traceId, id])).changes > 0) cited.push(id);
        return cited;
      }),
    /** Records how the task ended; an outcome of null (an environment failure) is no evidence. */
    settle: async (traceId: string, outcome: TaskOutcome | null, kind?: TaskOutcomeKind): Promise<void> =>
      void (await sql.run(SETTLE, [outcome, kind ?? (outcome === "failure" ? null : outcome), traceId])),
    byTrace: (traceId: string): Promise<InjectionRow[]> => sql.all<InjectionRow>(BY_TRACE, [traceId]),
    byExperience: (experienceId: number): Promise<InjectionRow[]> =>
      sql.all<InjectionRow>(BY_EXPERIENCE, [experienceId]),
    byAgent: (agentId: string, sinceMs = 0): Promise<InjectionRow[]> =>
      sql.all<InjectionRow>(BY_AGENT, [agentId, sinceMs]),
  };
}
