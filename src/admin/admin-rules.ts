/**
 * The admin API's rule routes: an agent's always-on rules, the candidates `laoding rules
 * propose` shows (the same function), accepting one (optionally in shorter words) and
 * removing a rule. The limits are the rules store's (300 characters, 5 active rules per
 * agent) and every change is in the memory ledger with the admin caller as its actor.
 */
import {
  acceptRuleCandidate,
  RuleCandidateError,
  ruleCandidates,
  type RuleCandidate,
} from "../agent/distillation/rule-candidates.js";
import type { Clock } from "../store/clock.js";
import { MAX_RULES_PER_AGENT, RULE_MAX_CHARS, RuleError, type RuleRow } from "../store/rules-store.js";
import type { Store } from "../store/store.js";
import { AdminError, type AdminErrorCode } from "./admin-errors.js";

/** Who the ledger says made a change through this API. */
export const ADMIN_ACTOR = "admin";

export type RuleList = { agentId: string; maxRules: number; maxChars: number; rules: RuleRow[] };

export type AdminRules = ReturnType<typeof createAdminRules>;

export function createAdminRules(store: Store, clock: Clock) {
  return {
    async list(agentId: string): Promise<RuleList> {
      return {
        agentId,
        maxRules: MAX_RULES_PER_AGENT,
        maxChars: RULE_MAX_CHARS,
        rules: await store.rules.active(agentId),
      };
    },
    candidates: (agentId: string): Promise<RuleCandidate[]> => ruleCandidates(store, agentId, clock.now()),
    accept: (agentId: string, candidateId: string, text: string | undefined): Promise<RuleRow> =>
      refusals(agentId, () =>
        acceptRuleCandidate(store, agentId, candidateId, { text, actor: ADMIN_ACTOR, now: clock.now() }),
      ),
    remove: (agentId: string, ruleId: number): Promise<RuleRow> =>
      refusals(agentId, () => store.rules.remove(ruleId, ADMIN_ACTOR, agentId)),
  };
}

const RULE_ERROR_CODES: Record<RuleError["kind"], AdminErrorCode> = {
  length: "RULE_TOO_LONG",
  limit: "RULE_LIMIT",
  duplicate: "RULE_EXISTS",
  "not-found": "RULE_NOT_FOUND",
};

/** The shared refusals as admin errors, each with what to do next. */
async function refusals<T>(agentId: string, run: () => Promise<T>): Promise<T> {
  const rules = `/v1/agents/${agentId}/rules`;
  try {
    return await run();
  } catch (error) {
    if (error instanceof RuleCandidateError) {
      if (error.kind === "unknown-candidate")
        throw new AdminError("RULE_CANDIDATE_NOT_FOUND", `${error.message} (GET ${rules}/candidates lists them)`);
      throw new AdminError("RULE_REFUSED", error.message);
    }
    if (!(error instanceof RuleError)) throw error;
    const next = {
      length: "send it in `text`",
      limit: `DELETE ${rules}/<ruleId>`,
      duplicate: `GET ${rules} lists them`,
      "not-found": `GET ${rules} lists them`,
    }[error.kind];
    throw new AdminError(RULE_ERROR_CODES[error.kind], `${error.message} (${next})`);
  }
}
