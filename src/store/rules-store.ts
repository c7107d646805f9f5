/**
 * Always-on rules per agent: at most 300 characters each and at most 5 active per agent.
 * Only an operator adds or removes one; every change is in the memory ledger.
 */
import type { Clock } from "./clock.js";
import type { LedgerStore } from "./ledger-store.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export const RULE_MAX_CHARS = 300;
export const MAX_RULES_PER_AGENT = 5;

/** A rule's text as it is stored: whitespace runs folded to one space, trimmed. */
export function foldRuleText(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export type RuleRow = {
  id: number;
  agentId: string;
  text: string;
  status: "active" | "removed";
  source: string | null;
  createdAt: number;
  updatedAt: number;
};

/** Why a rule change was refused: callers (the CLI, the admin API) key their answer off `kind`. */
export type RuleErrorKind = "length" | "limit" | "duplicate" | "not-found";

export class RuleError extends Error {
  override readonly name = "RuleError";
  constructor(
    readonly kind: RuleErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export type RulesStore = ReturnType<typeof createRulesStore>;

const COLUMNS = "id, agent_id AS agentId, text, status, source, created_at AS createdAt, updated_at AS updatedAt";

const ACTIVE = `SELECT ${COLUMNS} FROM rules WHERE agent_id = ? AND status = 'active' ORDER BY id`;
const BY_ID = `SELECT ${COLUMNS} FROM rules WHERE id = ?`;
const ALL = `SELECT ${COLUMNS} FROM rules WHERE agent_id = ? ORDER BY id`;
const INSERT =
  "INSERT INTO rules (agent_id, text, status, source, created_at, updated_at) VALUES (?, ?, 'active', ?, ?, ?) RETURNING id";
const REMOVE = "UPDATE rules SET status = 'removed', updated_at = ? WHERE id = ?";

export function createRulesStore(sql: SqlDriver, clock: Clock, ledger: LedgerStore) {
  const active = (agentId: string): Promise<RuleRow[]> => sql.all<RuleRow>(ACTIVE, [agentId]);
  const byId = (id: number): Promise<RuleRow | undefined> => sql.get<RuleRow>(BY_ID, [id]);
  const rulesLock = (agentId: string) => `rules:${agentId}`;
  return {
    active,
    list: (agentId: string): Promise<RuleRow[]> => sql.all<RuleRow>(ALL, [agentId]),
    get: byId,
    // The limit and duplicate checks read, then insert: concurrent accepts (the page, the CLI) take turns.
    add: (agentId: string, text: string, source: string, actor: string): Promise<RuleRow> =>
      sql.transaction(
        async () => {
          const rule = foldRuleText(text);
          if (rule.length === 0 || [...rule].length > RULE_MAX_CHARS)
            throw new RuleError(
              "length",
              `a rule is 1-${RULE_MAX_CHARS} characters; this one has ${[...rule].length}: give a shorter wording`,
            );
          const current = await active(agentId);
          if (current.length >= MAX_RULES_PER_AGENT)
            throw new RuleError("limit", `agent ${agentId} already has ${MAX_RULES_PER_AGENT} rules; remove one first`);
          if (current.some((existing) => existing.text === rule))
            throw new RuleError("duplicate", "the same rule is active already");
          const now = clock.now();
          const id = Number((await sql.get<{ id: number }>(INSERT, [agentId, rule, source, now, now]))?.id);
          const row = (await byId(id)) as RuleRow;
          await ledger.append({
            agentId,
            subject: "rule",
            subjectId: String(id),
            action: "accept",
            after: { text: rule, status: "active", source },
            actor,
          });
          return row;
        },
        { lock: rulesLock(agentId) },
      ),
    /** Retires an active rule; with `agentId`, only one of that agent's (another agent's rule is not found). */
    remove: (id: number, actor: string, agentId?: string): Promise<RuleRow> =>
      sql.transaction(async () => {
        const before = await byId(id);
        if (!before || before.status !== "active" || (agentId !== undefined && before.agentId !== agentId))
          throw new RuleError(
            "not-found",
            `no active rule ${id}${agentId === undefined ? "" : ` of agent ${agentId}`}`,
          );
        await sql.run(REMOVE, [clock.now(), id]);
        await ledger.append({
          agentId: before.agentId,
          subject: "rule",
          subjectId: String(id),
          action: "remove",
          before: { text: before.text, status: "active" },
          after: { status: "removed" },
          actor,
        });
        return (await byId(id)) as RuleRow;
      }),
  };
}
