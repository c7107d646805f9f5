/**
 * Versions of distilled skills. One version per skill is active (its text is the live
 * SKILL.md); a new version starts as a candidate, becomes active only through the
 * ratchet, and an active version on trial counts the outcomes of the tasks that use it.
 * Every status change is ledgered with before and after.
 */
import type { Clock } from "./clock.js";
import type { LedgerStore } from "./ledger-store.js";
import type { Db } from "./open-database.js";

export type SkillVersionStatus = "candidate" | "active" | "rejected" | "rolled_back" | "retired";

export type SkillVersion = {
  id: number;
  agentId: string;
  skillName: string;
  tag: string;
  version: number;
  status: SkillVersionStatus;
  content: string;
  bullets: number;
  baselineRate: number | null;
  trialUses: number;
  trialSuccesses: number;
  createdAt: number;
  updatedAt: number;
};

export type SkillVersionsStore = ReturnType<typeof createSkillVersionsStore>;

const COLUMNS = `id, agent_id AS agentId, skill_name AS skillName, tag, version, status, content, bullets, baseline_rate AS baselineRate,
  trial_uses AS trialUses, trial_successes AS trialSuccesses, created_at AS createdAt, updated_at AS updatedAt`;

export function createSkillVersionsStore(db: Db, clock: Clock, ledger: LedgerStore) {
  const byId = db.prepare<[number], SkillVersion>(`SELECT ${COLUMNS} FROM skill_versions WHERE id = ?`);
  const ofSkill = db.prepare<[string, string], SkillVersion>(`SELECT ${COLUMNS} FROM skill_versions WHERE agent_id = ? AND skill_name = ? ORDER BY version`);
  const ofAgent = db.prepare<[string], SkillVersion>(`SELECT ${COLUMNS} FROM skill_versions WHERE agent_id = ? ORDER BY skill_name, version`);
  const view = (row: SkillVersion) => ({ version: row.version, status: row.status, bullets: row.bullets, trialUses: row.trialUses, trialSuccesses: row.trialSuccesses, baselineRate: row.baselineRate });
  const setStatus = db.transaction((id: number, status: SkillVersionStatus, entry: { action: string; reason: string; actor: string }, reset?: { baselineRate: number | null }): SkillVersion => {
    const before = byId.get(id);
    if (!before) throw new Error(`no skill version ${id}`);
    if (reset) db.prepare("UPDATE skill_versions SET status = ?, baseline_rate = ?, trial_uses = 0, trial_successes = 0, updated_at = ? WHERE id = ?").run(status, reset.baselineRate, clock.now(), id);
    else db.prepare("UPDATE skill_versions SET status = ?, updated_at = ? WHERE id = ?").run(status, clock.now(), id);
    const after = byId.get(id) as SkillVersion;
    ledger.append({ agentId: before.agentId, subject: "skill", subjectId: `${before.skillName}@v${before.version}`, action: entry.action, before: view(before), after: view(after), reason: entry.reason, actor: entry.actor });
    return after;
  });
  return {
    add: db.transaction((input: { agentId: string; skillName: string; tag: string; content: string; bullets: number; actor: string }): SkillVersion => {
      const version = (ofSkill.all(input.agentId, input.skillName).at(-1)?.version ?? 0) + 1;
      const now = clock.now();
      const id = Number(
        db
          .prepare("INSERT INTO skill_versions (agent_id, skill_name, tag, version, status, content, bullets, created_at, updated_at) VALUES (?, ?, ?, ?, 'candidate', ?, ?, ?, ?)")
          .run(input.agentId, input.skillName, input.tag, version, input.content, input.bullets, now, now).lastInsertRowid,
      );
      const row = byId.get(id) as SkillVersion;
      ledger.append({ agentId: input.agentId, subject: "skill", subjectId: `${input.skillName}@v${version}`, action: "candidate", after: view(row), actor: input.actor });
      return row;
    }),
    get: (id: number): SkillVersion | undefined => byId.get(id),
    versions: (agentId: string, skillName: string): SkillVersion[] => ofSkill.all(agentId, skillName),
    all: (agentId: string): SkillVersion[] => ofAgent.all(agentId),
    active: (agentId: string, skillName: string): SkillVersion | undefined => ofSkill.all(agentId, skillName).find((row) => row.status === "active"),
    setStatus,
    /** `laoding experiences distill <tag>`: queued here, done by the running bot. */
    requestDistill: (agentId: string, tag: string): number => Number(db.prepare("INSERT INTO skill_distill_requests (agent_id, tag, requested_at) VALUES (?, ?, ?)").run(agentId, tag, clock.now()).lastInsertRowid),
    pendingRequests: (): { id: number; agentId: string; tag: string }[] =>
      db.prepare<[], { id: number; agentId: string; tag: string }>("SELECT id, agent_id AS agentId, tag FROM skill_distill_requests WHERE handled_at IS NULL ORDER BY id").all(),
    requests: (agentId: string): { id: number; tag: string; requestedAt: number; handledAt: number | null; outcome: string | null }[] =>
      db.prepare<[string], { id: number; tag: string; requestedAt: number; handledAt: number | null; outcome: string | null }>("SELECT id, tag, requested_at AS requestedAt, handled_at AS handledAt, outcome FROM skill_distill_requests WHERE agent_id = ? ORDER BY id").all(agentId),
    handleRequest: (id: number, outcome: string): void => void db.prepare("UPDATE skill_distill_requests SET handled_at = ?, outcome = ? WHERE id = ?").run(clock.now(), outcome, id),
    recordTrialUse: (id: number, success: boolean): SkillVersion => {
      db.prepare("UPDATE skill_versions SET trial_uses = trial_uses + 1, trial_successes = trial_successes + ? WHERE id = ?").run(success ? 1 : 0, id);
      return byId.get(id) as SkillVersion;
    },
  };
}
