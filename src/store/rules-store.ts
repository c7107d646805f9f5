/**
 * Always-on rules per agent: at most 300 characters each and at most 5 active per agent.
 * Only an operator adds or removes one; every change is in the memory ledger.
 */
import type { Clock } from "./clock.js";
import type { LedgerStore } from "./ledger-store.js";
import type { Db } from "./open-database.js";

export const RULE_MAX_CHARS = 300;
export const MAX_RULES_PER_AGENT = 5;

export type RuleRow = { id: number; agentId: string; text: string; status: "active" | "removed"; source: string | null; createdAt: number; updatedAt: number };

export class RuleError extends Error {
  override readonly name = "RuleError";
}

export type RulesStore = ReturnType<typeof createRulesStore>;

const COLUMNS = "id, agent_id AS agentId, text, status, source, created_at AS createdAt, updated_at AS updatedAt";

export function createRulesStore(db: Db, clock: Clock, ledger: LedgerStore) {
  const active = db.prepare<[string], RuleRow>(`SELECT ${COLUMNS} FROM rules WHERE agent_id = ? AND status = 'active' ORDER BY id`);
  const byId = db.prepare<[number], RuleRow>(`SELECT ${COLUMNS} FROM rules WHERE id = ?`);
  const all = db.prepare<[string], RuleRow>(`SELECT ${COLUMNS} FROM rules WHERE agent_id = ? ORDER BY id`);
  return {
    active: (agentId: string): RuleRow[] => active.all(agentId),
    list: (agentId: string): RuleRow[] => all.all(agentId),
    get: (id: number): RuleRow | undefined => byId.get(id),
    add: db.transaction((agentId: string, text: string, source: string, actor: string): RuleRow => {
      const rule = text.replace(/\s+/g, " ").trim();
      if (rule.length === 0 || [...rule].length > RULE_MAX_CHARS) throw new RuleError(`a rule is 1-${RULE_MAX_CHARS} characters; this one has ${[...rule].length}: shorten it with --text`);
      if (active.all(agentId).length >= MAX_RULES_PER_AGENT) throw new RuleError(`agent ${agentId} already has ${MAX_RULES_PER_AGENT} rules; remove one first (laoding rules remove <id>)`);
      if (active.all(agentId).some((existing) => existing.text === rule)) throw new RuleError("the same rule is active already");
      const now = clock.now();
      const id = Number(db.prepare("INSERT INTO rules (agent_id, text, status, source, created_at, updated_at) VALUES (?, ?, 'active', ?, ?, ?)").run(agentId, rule, source, now, now).lastInsertRowid);
      const row = byId.get(id) as RuleRow;
      ledger.append({ agentId, subject: "rule", subjectId: String(id), action: "accept", after: { text: rule, status: "active", source }, actor });
      return row;
    }),
    remove: db.transaction((id: number, actor: string): RuleRow => {
      const before = byId.get(id);
      if (!before || before.status !== "active") throw new RuleError(`no active rule ${id}; list them with \`laoding rules list\``);
      db.prepare("UPDATE rules SET status = 'removed', updated_at = ? WHERE id = ?").run(clock.now(), id);
      ledger.append({ agentId: before.agentId, subject: "rule", subjectId: String(id), action: "remove", before: { text: before.text, status: "active" }, after: { status: "removed" }, actor });
      return byId.get(id) as RuleRow;
    }),
  };
}
