import { acceptRuleCandidate, RuleCandidateError, ruleCandidates } from "../../agent/distillation/rule-candidates.js";
import { systemClock } from "../../store/clock.js";
import { RuleError } from "../../store/rules-store.js";
import { openStore } from "../../store/store.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding rules <action> [options]

  list                      the agent's always-on rules (at most 5, 300 characters each)
  propose                   candidates with their evidence: heuristics of active distilled
                            skills and lessons whose tasks succeed (5 or more, 70%)
  accept <candidate> [--text TEXT]   make a candidate a rule (optionally reworded)
  remove <rule-id>          retire a rule (kept in the ledger)

Options:
  --agent ID        the agent (default: the first in agents.json)
  --json            machine-readable output
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const rulesCommand: Command = {
  name: "rules",
  summary: "always-on rules per agent: list, propose from distilled evidence, accept, remove",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      { agent: { type: "string" }, json: { type: "boolean" }, ...WORKSPACE_FLAG.option, text: { type: "string" } },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, target] = positionals;
    if (!action) throw new UsageError("name an action", usage);
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const agent = values.agent ? boot.agents.find((candidate) => candidate.id === values.agent) : boot.agents[0];
    if (!agent) throw new UsageError(`no agent "${values.agent}"`, usage);
    const store = await openStore(boot.layout.databaseTarget, systemClock);
    const out = (value: unknown, lines: () => string[]) => {
      if (values.json) writeLine(context.stdout, JSON.stringify(value, null, 2));
      else for (const line of lines()) writeLine(context.stdout, line);
      return 0;
    };
    try {
      switch (action) {
        case "list": {
          const rules = await store.rules.active(agent.id);
          return out(rules, () =>
            rules.length === 0
              ? [`agent ${agent.id}: no rules`]
              : rules.map((rule) => `${rule.id}. ${rule.text}${rule.source ? ` (from ${rule.source})` : ""}`),
          );
        }
        case "propose": {
          const candidates = await ruleCandidates(store, agent.id, systemClock.now());
          return out(candidates, () =>
            candidates.length === 0
              ? [`agent ${agent.id}: no candidates yet`]
              : candidates.flatMap((candidate) => [
                  `${candidate.id}: ${candidate.text}`,
                  `  evidence: ${candidate.evidence}`,
                ]),
          );
        }
        case "accept": {
          if (!target) throw new UsageError("accept needs a candidate id from `laoding rules propose`", usage);
          const rule = await acceptRuleCandidate(store, agent.id, target, {
            text: values.text,
            actor: "operator",
            now: systemClock.now(),
          });
          return out(rule, () => [`rule ${rule.id} accepted for ${agent.id}: ${rule.text}`]);
        }
        case "remove": {
          const id = Number(target);
          if (!Number.isInteger(id) || id <= 0) throw new UsageError("remove needs a rule id (a whole number)", usage);
          const rule = await store.rules.remove(id, "operator", agent.id);
          return out(rule, () => [`rule ${rule.id} removed`]);
        }
        default:
          throw new UsageError(`unknown action "${action}"`, usage);
      }
    } catch (error) {
      throw withCliHint(error);
    } finally {
      await store.close();
    }
  },
};

/** The shared refusals, with the command that fixes each (the admin API words its own). */
function withCliHint(error: unknown): unknown {
  const hint =
    error instanceof RuleCandidateError && error.kind === "unknown-candidate"
      ? "list them with `laoding rules propose`"
      : error instanceof RuleError
        ? {
            length: "reword it with --text",
            limit: "laoding rules remove <id>",
            duplicate: "",
            "not-found": "list them with `laoding rules list`",
          }[error.kind]
        : "";
  if (!hint || !(error instanceof Error)) return error;
  return new Error(`${error.message}; ${hint}`, { cause: error });
}
