import { text } from "../../agent/texts.js";
import { createChatGateway } from "../../channels/chat-gateway.js";
import { createConsoleChannel } from "../../channels/console-channel.js";
import { messageCap } from "../../agent/message-cap-reply.js";
import type { Channel } from "../../channels/channel.js";
import { ConfigError } from "../../config/config-error.js";
import { openAgentReach } from "../../runtime/agent-reach.js";
import { createBotRuntime, type BotRuntime } from "../../runtime/bot-runtime.js";
import {
  loginChatBots,
  planChatBots,
  selectChannels,
  type ChannelName,
  type PlannedBot,
} from "../../runtime/chat-bots.js";
import { prepareToolhostLaunches } from "../../runtime/toolhost-launch.js";
import { withDoctorHint } from "../../doctor/doctor-hint.js";
import { formatSeedReport } from "../../workspace/seed-workspace.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { startAdminFor } from "./admin-command.js";
import { CLI_ENTRY, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";
import { runBot } from "../run-bot.js";
import { consoleStreams, gatewayStreaming } from "../streaming-options.js";

const usage = `Usage: laoding start [--workspace DIR]

Seeds the workspace (only what is missing), validates the configuration, opens and
migrates the database, and runs the bot until SIGINT or SIGTERM (console: until end of
input). Channels: MESSAGE_CHANNEL, or else every chat channel with credentials
(Telegram, Feishu; each agent may have its own bot), or else the console. A bot that
cannot log in stops start-up, saying what to check (see also \`laoding channels check\`).

Options:
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const startCommand: Command = {
  name: "start",
  summary: "run the bot on its channels (Telegram, Feishu, or the console)",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { ...WORKSPACE_FLAG.option }, usage);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    try {
      return await start(context, values.workspace);
    } catch (error) {
      // A configuration, sandbox or login failure: the doctor shows every problem at once.
      throw withDoctorHint(error);
    }
  },
};

async function start(context: CliContext, workspaceDir: string | undefined): Promise<number> {
  // Logs go to a file only while a person chats on this terminal (the console is the channel).
  const consoleOnly = (channels: ChannelName[]) => channels.length === 1 && channels[0] === "console";
  const boot = bootstrap(context, {
    seed: true,
    workspaceDir,
    logRouting: { interactive: (loaded, agents) => consoleOnly(selectChannels(loaded, agents)) && isTerminal(context) },
  });
  const channels = selectChannels(boot.loaded, boot.agents);
  if (!consoleOnly(channels) && channels.includes("console")) {
    throw new ConfigError(`MESSAGE_CHANNEL=${channels.join(",")}: the console cannot run together with chat channels`, {
      hint: "Drop console from MESSAGE_CHANNEL, and talk to the agent in a terminal with `laoding chat` while the bot runs",
    });
  }
  // The admin API beside the bot when ADMIN_PORT is set (docs/admin-api.md).
  const admin =
    boot.loaded.config.ADMIN_PORT > 0 ? await startAdminFor(context, boot, boot.loaded.config.ADMIN_PORT) : undefined;
  try {
    // The admin API shows the running bot's MCP servers once its toolhosts exist.
    const attach = (runtime: BotRuntime) => admin?.attachBot(runtime.toolhosts);
    return consoleOnly(channels)
      ? await serveConsole(context, boot, boot.agents[0]?.id as string, attach)
      : await serveChatChannels(context, boot, channels, attach);
  } finally {
    await admin?.close();
  }
}

/** Telegram and Feishu: every bot logs in first (a bad token stops start-up), then the gateway runs them. */
async function serveChatChannels(
  context: CliContext,
  boot: Boot,
  channels: ChannelName[],
  attach?: (runtime: BotRuntime) => void,
): Promise<number> {
  const { logger, loaded } = boot;
  const planned = await planChatBots({ loaded, agents: boot.agents, channels, logger });
  for (const warning of [...planned.warnings, ...withoutOperators(planned.bots)]) boot.warn(warning);
  const bots = await loginChatBots(planned.bots);
  const { runtime, sandbox } = await startRuntime(context, boot, false);
  attach?.(runtime);
  const locale = loaded.config.BOT_LOCALE;
  const channel = createChatGateway({
    bots,
    store: runtime.store.channels,
    work: runtime.store.chatWork,
    keeper: runtime.replica.keeper,
    transaction: (work) => runtime.store.transaction(work),
    logger,
    refusal: (message) => text(locale, "notAllowed", { userId: message.userId }),
    databaseDown: () => text(locale, "databaseDown"),
    graceMs: loaded.config.SHUTDOWN_GRACE_MS,
    messageCap: messageCap(loaded.config.MESSAGE_MAX_CHARS, locale),
    // STREAM_REPLIES: the answer shown while it is written, on the chat channels that stream.
    streaming: gatewayStreaming(loaded.config),
  });
  const names = bots.map((bot) => `${bot.platform.channel} ${bot.identity.displayName} (agent ${bot.agentId})`);
  logger.info(
    {
      workspace: boot.layout.workspaceDir,
      channels,
      bots: bots.map((bot) => ({ key: bot.key, name: bot.identity.displayName, agent: bot.agentId })),
      sandbox: sandbox.mode,
      database: runtime.store.sql.label,
      model: runtime.model?.model ?? null,
    },
    `LaodingBot ready: ${names.join(", ")}; press Ctrl-C to stop`,
  );
  // Logs in the file: say once where they are, so an unsupervised start is not silent.
  // Said once runBot has its signal handlers (set as it starts): a supervisor that stops
  // the bot on seeing this line must not find Node's default SIGTERM, which kills at once.
  const logFile = boot.logFile;
  if (logFile)
    setImmediate(() =>
      writeLine(
        context.stderr,
        `LaodingBot ready: ${names.join(", ")}. Logs: ${logFile.path} (laoding logs). Ctrl-C stops.`,
      ),
    );
  await runBot(runtime, channel, logger, { graceMs: loaded.config.SHUTDOWN_GRACE_MS });
  return 0;
}

/** Shared by `start` (console channel) and `chat`. */
export async function serveConsole(
  context: CliContext,
  boot: Boot,
  agentId: string,
  attach?: (runtime: BotRuntime) => void,
): Promise<number> {
  const { logger, layout } = boot;
  if (!boot.agents.some((agent) => agent.id === agentId)) {
    throw new UsageError(`no agent "${agentId}"; known: ${boot.agents.map((agent) => agent.id).join(", ")}`, "");
  }
  // Only the operator at this terminal talks to the bot (launch policy: `localOperatorOnly`).
  const { runtime, sandbox } = await startRuntime(context, boot, true);
  attach?.(runtime);
  const interactive = isTerminal(context);
  const channel: Channel = createConsoleChannel({
    input: context.stdin,
    output: context.stdout,
    agentId,
    interactive,
    locale: boot.loaded.config.BOT_LOCALE,
    messageCap: messageCap(boot.loaded.config.MESSAGE_MAX_CHARS, boot.loaded.config.BOT_LOCALE),
    stream: consoleStreams(boot.loaded.config),
  });
  logger.info(
    {
      workspace: layout.workspaceDir,
      channel: channel.name,
      sandbox: sandbox.mode,
      agent: agentId,
      agents: boot.agents.map((agent) => agent.id),
      database: runtime.store.sql.label,
      model: runtime.model?.model ?? null,
    },
    interactive ? "LaodingBot ready; type a message, Ctrl-C to quit" : "LaodingBot ready; press Ctrl-C to stop",
  );
  if (interactive)
    writeLine(
      context.stderr,
      text(boot.loaded.config.BOT_LOCALE, "consoleReady", { agentId, sandbox: sandbox.mode, logDir: layout.logDir }),
    );
  await runBot(runtime, channel, logger, { graceMs: boot.loaded.config.SHUTDOWN_GRACE_MS });
  return 0;
}

/** Seed report, sandbox (a sandbox that cannot work stops start-up), and the bot's runtime. */
async function startRuntime(
  context: CliContext,
  boot: Boot,
  localOperatorOnly: boolean,
): Promise<{ runtime: BotRuntime; sandbox: ReturnType<typeof prepareToolhostLaunches> }> {
  const { logger, layout, loaded } = boot;
  const copied = boot.seedReport
    ? formatSeedReport(boot.seedReport, layout.workspaceDir).filter((line) => !line.startsWith("kept"))
    : [];
  if (copied.length > 0) logger.info({ workspace: layout.workspaceDir, seeded: copied }, "workspace seeded");
  // Egress and MCP servers first: the jails bind the proxy's sockets, and a `$NAME` that is not set stops start-up here.
  const reach = await openAgentReach({
    config: loaded.config,
    layout,
    agents: boot.agents,
    lookup: (name) => loaded.declaredValue(name),
    logger,
  });
  try {
    // A sandbox that cannot work stops start-up here, naming the reason (SandboxUnavailableError).
    const sandbox = prepareToolhostLaunches({
      config: loaded.config,
      layout,
      agents: boot.agents,
      cliEntry: CLI_ENTRY,
      localOperatorOnly,
      reach,
    });
    // Said on the console too, whatever the log level: a weaker sandbox is never silent.
    for (const warning of [...sandbox.warnings, ...reach.warnings]) boot.warn(warning);
    const logFile = boot.logFile;
    const runtime = await createBotRuntime({
      loaded,
      layout,
      agents: boot.agents,
      logger,
      cliEntry: CLI_ENTRY,
      launches: sandbox,
      reach,
      ...(logFile ? { childStderr: () => logFile.fd() } : {}),
    });
    return { runtime, sandbox };
  } catch (error) {
    await reach.close();
    throw error;
  }
}

/**
 * Bots nobody may run operator commands on (/capability_gaps, /reload_skills): one
 * warning each, with the command that adds an operator.
 */
export function withoutOperators(bots: readonly PlannedBot[]): string[] {
  return bots
    .filter((bot) => !bot.access.hasOperators)
    .map((bot) => {
      const example = bot.channel === "telegram" ? "telegram:<user id>" : "feishu:<open_id>";
      const agentFlag = bot.credentials.startsWith("agents.json") ? ` --agent ${bot.agentId}` : "";
      return `${bot.key}: no operator, so nobody in a chat can run /capability_gaps or /reload_skills; add one with \`laoding operators add ${example}${agentFlag}\``;
    });
}

/** A person is typing on this terminal (not a pipe, not a supervisor). */
export function isTerminal(context: CliContext): boolean {
  return (context.stdin as NodeJS.ReadStream).isTTY === true;
}
