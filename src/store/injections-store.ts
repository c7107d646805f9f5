/**
 * Which lessons were selected for which task, in which arm, whether the answer cited
 * them and how the task ended. Adoption, promotion, deprecation and the effect report
 * are all computed from these rows, never from the distiller's opinion.
 */
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

export type InjectionArm = "treatment" | "holdout";
export type TaskOutcome = "success" | "failure";

export type InjectionRow = { id: number; agentId: string; traceId: string; experienceId: number; rank: number; arm: InjectionArm; cited: number; outcome: TaskOutcome | null; createdAt: number };

export type InjectionsStore = ReturnType<typeof createInjectionsStore>;

const COLUMNS = "id, agent_id AS agentId, trace_id AS traceId, experience_id AS experienceId, rank, arm, cited, outcome, created_at AS createdAt";

export function createInjectionsStore(db: Db, clock: Clock) {
  const insert = db.prepare("INSERT OR IGNORE INTO experience_injections (agent_id, trace_id, experience_id, rank, arm, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  const cite = db.prepare("UPDATE experience_injections SET cited = 1 WHERE trace_id = ? AND experience_id = ? AND arm = 'treatment'");
  const settle = db.prepare("UPDATE experience_injections SET outcome = ? WHERE trace_id = ?");
  const byTrace = db.prepare<[string], InjectionRow>(`SELECT ${COLUMNS} FROM experience_injections WHERE trace_id = ? ORDER BY rank`);
  const byExperience = db.prepare<[number], InjectionRow>(`SELECT ${COLUMNS} FROM experience_injections WHERE experience_id = ? ORDER BY id`);
  const byAgent = db.prepare<[string, number], InjectionRow>(`SELECT ${COLUMNS} FROM experience_injections WHERE agent_id = ? AND created_at >= ? ORDER BY id`);
  // A holdout task once, with the tags its settlement recorded.
  const holdoutTasks = db.prepare<[string], { traceId: string; outcome: TaskOutcome; tags: string | null }>(
    `SELECT DISTINCT i.trace_id AS traceId, i.outcome, r.tags FROM experience_injections i LEFT JOIN distill_runs r ON r.trace_id = i.trace_id
     WHERE i.agent_id = ? AND i.arm = 'holdout' AND i.outcome IS NOT NULL ORDER BY i.id`,
  );
  return {
    holdoutTasks: (agentId: string): { traceId: string; outcome: TaskOutcome; tags: string[] }[] =>
      holdoutTasks.all(agentId).map((row) => ({ traceId: row.traceId, outcome: row.outcome, tags: (row.tags ?? "").split(" ").filter(Boolean) })),
    record: db.transaction((agentId: string, traceId: string, arm: InjectionArm, experienceIds: number[]): void => {
      experienceIds.forEach((experienceId, index) => insert.run(agentId, traceId, experienceId, index + 1, arm, clock.now()));
    }),
    /** Marks the cited lessons of a treatment task; returns the ids that were really injected. */
    cite: db.transaction((traceId: string, experienceIds: number[]): number[] => experienceIds.filter((id) => cite.run(traceId, id).changes > 0)),
    settle: (traceId: string, outcome: TaskOutcome): void => void settle.run(outcome, traceId),
    byTrace: (traceId: string): InjectionRow[] => byTrace.all(traceId),
    byExperience: (experienceId: number): InjectionRow[] => byExperience.all(experienceId),
    byAgent: (agentId: string, sinceMs = 0): InjectionRow[] => byAgent.all(agentId, sinceMs),
  };
}
