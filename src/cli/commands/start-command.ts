import { createConsoleChannel } from "../../channels/console-channel.js";
import type { Channel } from "../../channels/channel.js";
import { createBotRuntime } from "../../runtime/bot-runtime.js";
import { prepareToolhostLaunches } from "../../runtime/toolhost-launch.js";
import { formatSeedReport } from "../../workspace/seed-workspace.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { startAdminFor } from "./admin-command.js";
import { CLI_ENTRY, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags } from "../parse-flags.js";
import { runBot } from "../run-bot.js";

const usage = `Usage: laoding start [--workspace DIR]

Seeds the workspace (only what is missing), validates the configuration, opens and
migrates the database, and runs the bot on MESSAGE_CHANNEL until SIGINT or SIGTERM
(console: until end of input).

Options:
  --workspace DIR   workspace folder (overrides AGENT_WORKSPACE_DIR)
  -h, --help        show this help`;

export const startCommand: Command = {
  name: "start",
  summary: "run the bot on MESSAGE_CHANNEL",
  usage,
  async run(context) {
    const { values } = parseFlags(context.args, { workspace: { type: "string" } }, usage);
    if (values.help) return writeLine(context.stdout, usage), 0;
    const boot = bootstrap(context, { seed: true, workspaceDir: values.workspace, logToFile: (loaded) => loaded.config.MESSAGE_CHANNEL === "console" && isTerminal(context) });
    const channelName = boot.loaded.config.MESSAGE_CHANNEL;
    if (channelName !== "console") {
      throw new Error(`MESSAGE_CHANNEL=${channelName} is not available in this version yet; set MESSAGE_CHANNEL=console`);
    }
    // The admin API beside the bot when ADMIN_PORT is set (docs/admin-api.md).
    const admin = boot.loaded.config.ADMIN_PORT > 0 ? await startAdminFor(context, boot, boot.loaded.config.ADMIN_PORT) : undefined;
    try {
      return await serveConsole(context, boot, boot.agents[0]?.id as string);
    } finally {
      await admin?.close();
    }
  },
};

/** Shared by `start` (console channel) and `chat`. */
export async function serveConsole(context: CliContext, boot: Boot, agentId: string): Promise<number> {
  const { logger, layout, loaded } = boot;
  if (!boot.agents.some((agent) => agent.id === agentId)) {
    throw new UsageError(`no agent "${agentId}"; known: ${boot.agents.map((agent) => agent.id).join(", ")}`, "");
  }
  const copied = boot.seedReport ? formatSeedReport(boot.seedReport, layout.workspaceDir).filter((line) => !line.startsWith("kept")) : [];
  if (copied.length > 0) logger.info({ workspace: layout.workspaceDir, seeded: copied }, "workspace seeded");
  // A sandbox that cannot work stops start-up here, naming the reason (SandboxUnavailableError).
  const sandbox = prepareToolhostLaunches({ config: loaded.config, layout, agents: boot.agents, cliEntry: CLI_ENTRY });
  for (const warning of sandbox.warnings) {
    logger.warn(warning);
    // Said on the console too, whatever the log level: a weaker sandbox is never silent.
    writeLine(context.stderr, `warning: ${warning}`);
  }
  const logFile = boot.logFile;
  const runtime = createBotRuntime({ loaded, layout, agents: boot.agents, logger, cliEntry: CLI_ENTRY, launches: sandbox, ...(logFile ? { childStderr: () => logFile.fd() } : {}) });
  const interactive = isTerminal(context);
  const channel: Channel = createConsoleChannel({ input: context.stdin, output: context.stdout, agentId, interactive });
  logger.info(
    { workspace: layout.workspaceDir, channel: channel.name, sandbox: sandbox.mode, agent: agentId, agents: boot.agents.map((agent) => agent.id), database: layout.databaseFile, model: runtime.model?.model ?? null },
    interactive ? "LaodingBot ready; type a message, Ctrl-C to quit" : "LaodingBot ready; press Ctrl-C to stop",
  );
  if (interactive) writeLine(context.stderr, `LaodingBot is ready (agent ${agentId}, sandbox ${sandbox.mode}). Logs: ${layout.logDir} (laoding logs). Ctrl-C cancels an answer; Ctrl-C at the prompt or Ctrl-D quits.`);
  await runBot(runtime, channel, logger, { graceMs: loaded.config.SHUTDOWN_GRACE_MS });
  return 0;
}

/** A person is typing on this terminal (not a pipe, not a supervisor). */
export function isTerminal(context: CliContext): boolean {
  return (context.stdin as NodeJS.ReadStream).isTTY === true;
}

