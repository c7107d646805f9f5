/**
 * The memory ledger: every change to a lesson, a skill version or a rule, with its state
 * before and after as JSON, who made it and why. Nothing in it is ever updated or deleted
 * by the loop, so any change can be read back and undone.
 */
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

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

export type LedgerRow = { id: number; agentId: string; subject: LedgerSubject; subjectId: string; action: string; before: string | null; after: string | null; reason: string | null; actor: string; createdAt: number };

export type LedgerStore = ReturnType<typeof createLedgerStore>;

const COLUMNS = "id, agent_id AS agentId, subject, subject_id AS subjectId, action, before, after, reason, actor, created_at AS createdAt";

export function createLedgerStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    "INSERT INTO memory_ledger (agent_id, subject, subject_id, action, before, after, reason, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const bySubject = db.prepare<[string, string], LedgerRow>(`SELECT ${COLUMNS} FROM memory_ledger WHERE subject = ? AND subject_id = ? ORDER BY id`);
  const byAgent = db.prepare<[string, number], LedgerRow>(`SELECT ${COLUMNS} FROM memory_ledger WHERE agent_id = ? AND created_at >= ? ORDER BY id`);
  return {
    append(entry: LedgerEntry): number {
      const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
      return Number(insert.run(entry.agentId, entry.subject, entry.subjectId, entry.action, json(entry.before), json(entry.after), entry.reason ?? null, entry.actor, clock.now()).lastInsertRowid);
    },
    bySubject: (subject: LedgerSubject, subjectId: string): LedgerRow[] => bySubject.all(subject, subjectId),
    byAgent: (agentId: string, sinceMs = 0): LedgerRow[] => byAgent.all(agentId, sinceMs),
  };
}
