/**
 * `laoding operators add|remove|list`: who may run operator commands in a chat. Lists are
 * per bot (DECISIONS.md, channels): OPERATOR_IDS (`telegram:123`) counts on every bot of
 * its channel; an agent's own bot in agents.json has its own `operators` too (`--agent`).
 * Files are edited in place, atomically, every other line kept; a running bot applies the
 * change at its next start.
 */
import { join } from "node:path";
import { parseOperatorId, type OperatorId } from "../../channels/access-policy.js";
import { editBotOperators, type AgentDefinition } from "../../config/agents.js";
import { ConfigError } from "../../config/config-error.js";
import { readEnvFile, setEnvValue } from "../../config/env-file.js";
import { describeSource, type LoadedConfig } from "../../config/load-config.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding operators add <channel:user-id> [--agent ID] [--workspace DIR]
       laoding operators remove <channel:user-id> [--agent ID] [--workspace DIR]
       laoding operators list [--workspace DIR]

Operators may run /capability_gaps, /reload_skills and the other operator commands in a
chat; the console user always may. A user an operator command refuses is told their id.

  add       telegram:123456 or feishu:ou_... ; without --agent it goes to OPERATOR_IDS
            in the workspace's configs/env and counts on every bot of that channel;
            with --agent it goes to that agent's own bot in agents.json (an agent
            without its own bot uses OPERATOR_IDS)
  remove    the reverse
  list      every bot's operators

Restart the bot (laoding start) to apply a change.

Options:
  --agent ID        the agent whose bot the operator is for
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const operatorsCommand: Command = {
  name: "operators",
  summary: "add, remove or list who may run operator commands in chats",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      { agent: { type: "string" }, ...WORKSPACE_FLAG.option },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, id, ...extra] = positionals;
    if (action !== "add" && action !== "remove" && action !== "list")
      throw new UsageError(action ? `unknown action "${action}"` : "an action is required", usage);
    if (action === "list" ? id !== undefined || values.agent !== undefined : id === undefined || extra.length > 0)
      throw new UsageError(
        action === "list" ? "list takes no id and no --agent" : `${action} takes one channel:user-id`,
        usage,
      );
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    if (action === "list") return (listOperators(context, boot), 0);
    const parsed = parseOperatorId(id as string);
    if ("problem" in parsed) throw new UsageError(parsed.problem, usage);
    const agent =
      values.agent === undefined ? undefined : boot.agents.find((candidate) => candidate.id === values.agent);
    if (values.agent !== undefined && !agent)
      throw new UsageError(
        `no agent "${values.agent}"; known: ${boot.agents.map((candidate) => candidate.id).join(", ")}`,
        usage,
      );
    const entry = `${parsed.channel}:${parsed.userId}`;
    const change = (list: string[]) =>
      action === "add" ? [...list.filter((item) => item !== entry), entry] : list.filter((item) => item !== entry);
    if (agent?.[parsed.channel]) return editOwnBot(context, boot, agent, parsed, action);
    return editOperatorIds(context, boot, entry, action, change);
  },
};

function editOwnBot(
  context: CliContext,
  boot: Boot,
  agent: AgentDefinition,
  id: OperatorId,
  action: "add" | "remove",
): number {
  const current = agent[id.channel]?.operators ?? [];
  const present = current.includes(id.userId);
  const where = `the operators of agent ${agent.id}'s ${id.channel} bot in ${boot.layout.agentsFile}`;
  if (present === (action === "add"))
    return say(context, `${id.channel}:${id.userId} is ${present ? "already" : "not"} in ${where}`, action);
  // agents.json lists bare ids: the bot is already of one channel.
  editBotOperators(boot.layout.agentsFile, agent.id, id.channel, (list) =>
    action === "add" ? [...list, id.userId] : list.filter((item) => item !== id.userId),
  );
  writeLine(
    context.stdout,
    `${action === "add" ? "added" : "removed"} ${id.channel}:${id.userId} ${action === "add" ? "to" : "from"} ${where}; restart the bot to apply it`,
  );
  return 0;
}

function editOperatorIds(
  context: CliContext,
  boot: Boot,
  entry: string,
  action: "add" | "remove",
  change: (list: string[]) => string[],
): number {
  const envFile = join(boot.loaded.workspaceDir, "configs", "env");
  const source = boot.loaded.sources.OPERATOR_IDS;
  // Edit the file the value comes from; a value from the environment wins over any file.
  const target = source?.kind === "file" ? source.path : envFile;
  const current = splitList(readEnvFile(target)?.get("OPERATOR_IDS"));
  const present = current.includes(entry);
  if (present === (action === "add"))
    return say(context, `${entry} is ${present ? "already" : "not"} in OPERATOR_IDS in ${target}`, action);
  setEnvValue(target, "OPERATOR_IDS", change(current).join(","));
  writeLine(
    context.stdout,
    `${action === "add" ? "added" : "removed"} ${entry} ${action === "add" ? "to" : "from"} OPERATOR_IDS in ${target}; restart the bot to apply it`,
  );
  if (source?.kind === "environment" || source?.kind === "flag")
    boot.warn(`OPERATOR_IDS is also set in ${describeSource(source)}, which wins over ${target}: change it there too`);
  return 0;
}

/** Nothing to do: adding one already there is fine (0); removing one not there is a mistake worth an exit status (1). */
function say(context: CliContext, message: string, action: "add" | "remove"): number {
  if (action === "add") return (writeLine(context.stdout, message), 0);
  throw new ConfigError(message, { hint: "See `laoding operators list`" });
}

/** Every bot's operators: the one list a bot checks is OPERATOR_IDS for its channel plus its own. */
function listOperators(context: CliContext, boot: Boot): void {
  const { loaded, agents } = boot;
  const global = loaded.config.OPERATOR_IDS;
  writeLine(
    context.stdout,
    `OPERATOR_IDS (${loaded.sources.OPERATOR_IDS ? describeSource(loaded.sources.OPERATOR_IDS) : "unset"}): ${global.length > 0 ? global.join(", ") : "none"}`,
  );
  for (const bot of chatBots(loaded, agents)) {
    const shared = global
      .filter((item) => item.startsWith(`${bot.channel}:`) || !item.includes(":"))
      .map((item) => (item.includes(":") ? item : `${bot.channel}:${item}`));
    const own = bot.own.map((item) => `${bot.channel}:${item}`);
    const all = [...new Set([...shared, ...own])];
    writeLine(
      context.stdout,
      `${bot.channel}:${bot.agentId} (${bot.credentials}): ${all.length > 0 ? all.join(", ") : `none; add one with laoding operators add ${bot.channel}:<id>${bot.credentials.startsWith("agents.json") ? ` --agent ${bot.agentId}` : ""}`}`,
    );
  }
}

/** The chat bots the configuration names, whether or not their credentials are set yet. */
function chatBots(
  loaded: LoadedConfig,
  agents: AgentDefinition[],
): { channel: "telegram" | "feishu"; agentId: string; credentials: string; own: string[] }[] {
  const { config } = loaded;
  return agents.flatMap((agent, index) => [
    ...(agent.telegram
      ? [
          {
            channel: "telegram" as const,
            agentId: agent.id,
            credentials: `agents.json ${agent.id}.telegram`,
            own: agent.telegram.operators,
          },
        ]
      : index === 0 && config.TELEGRAM_BOT_TOKEN
        ? [{ channel: "telegram" as const, agentId: agent.id, credentials: "TELEGRAM_BOT_TOKEN", own: [] }]
        : []),
    ...(agent.feishu
      ? [
          {
            channel: "feishu" as const,
            agentId: agent.id,
            credentials: `agents.json ${agent.id}.feishu`,
            own: agent.feishu.operators,
          },
        ]
      : index === 0 && config.FEISHU_APP_ID
        ? [{ channel: "feishu" as const, agentId: agent.id, credentials: "FEISHU_APP_ID", own: [] }]
        : []),
  ]);
}

function splitList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
