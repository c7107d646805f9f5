/**
 * The memory ledger: every change to a lesson, a skill version or a rule, with its state
 * before and after as JSON, who made it and why. Nothing in it is ever updated or deleted
 * by the loop, so any change can be read back and undone.
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type LedgerSubject = "experience" | "skill" | "rule";

export type LedgerEntry = {
  agentId: string;
  subject: LedgerSubject;
  subjectId: string;
  action: string;
  before?: unknown;
  after?: unknown;
  reason?: string;
  actor: string;
};

export type LedgerRow = {
  id: number;
  agentId: string;
  subject: LedgerSubject;
  subjectId: string;
  action: string;
  before: string | null;
  after: string | null;
  reason: string | null;
  actor: string;
  createdAt: number;
};

export type LedgerStore = ReturnType<typeof createLedgerStore>;

const COLUMNS =
  "id, agent_id AS agentId, subject, subject_id AS subjectId, action, before, after, reason, actor, created_at AS createdAt";

const INSERT =
  "INSERT INTO memory_ledger (agent_id, subject, subject_id, action, before, after, reason, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id";
const BY_SUBJECT = `SELECT ${COLUMNS} FROM memory_ledger WHERE subject = ? AND subject_id = ? ORDER BY id`;
const BY_AGENT = `SELECT ${COLUMNS} FROM memory_ledger WHERE agent_id = ? AND created_at >= ? ORDER BY id`;

export function createLedgerStore(sql: SqlDriver, clock: Clock) {
  return {
    async append(entry: LedgerEntry): Promise<number> {
      const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
      const row = await sql.get<{ id: number }>(INSERT, [
        entry.agentId,
        entry.subject,
        entry.subjectId,
        entry.action,
        json(entry.before),
        json(entry.after),
        entry.reason ?? null,
        entry.actor,
        clock.now(),
      ]);
      return Number(row?.id);
    },
    bySubject: (subject: LedgerSubject, subjectId: string): Promise<LedgerRow[]> =>
      sql.all<LedgerRow>(BY_SUBJECT, [subject, subjectId]),
    byAgent: (agentId: string, sinceMs = 0): Promise<LedgerRow[]> => sql.all<LedgerRow>(BY_AGENT, [agentId, sinceMs]),
  };
}
