import { ruleCandidates } from "../../agent/distillation/rule-candidates.js";
import { unsafeText } from "../../agent/distillation/unsafe-text.js";
import { systemClock } from "../../store/clock.js";
import { openStore } from "../../store/store.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding rules <action> [options]

  list                      the agent's always-on rules (at most 5, 300 characters each)
  propose                   candidates with their evidence: heuristics of active distilled
                            skills and lessons cited in many successful tasks
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
          const candidate = (await ruleCandidates(store, agent.id, systemClock.now())).find(
            (item) => item.id === target,
          );
          if (!candidate) throw new Error(`no candidate "${target}"; list them with \`laoding rules propose\``);
          // The operator's own wording passes the same check as learned text (hidden characters are invisible to them too);
          // a network command the operator writes is theirs to approve, so it is not held.
          const text = values.text ?? candidate.text;
          const unsafe = unsafeText(text);
          if (unsafe && !unsafe.hold) throw new Error(`rule refused: it ${unsafe.reason}`);
          const rule = await store.rules.add(agent.id, text, candidate.id, "operator");
          return out(rule, () => [`rule ${rule.id} accepted for ${agent.id}: ${rule.text}`]);
        }
        case "remove": {
          const id = Number(target);
          if (!Number.isInteger(id) || id <= 0) throw new UsageError("remove needs a rule id (a whole number)", usage);
          const rule = await store.rules.remove(id, "operator");
          return out(rule, () => [`rule ${rule.id} removed`]);
        }
        default:
          throw new UsageError(`unknown action "${action}"`, usage);
      }
    } finally {
      await store.close();
    }
  },
};
