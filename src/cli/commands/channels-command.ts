import { ConfigError } from "../../config/config-error.js";
import { configuredSecrets } from "../../log/configured-secrets.js";
import { createRedactor } from "../../log/redact.js";
import { loginChatBots, planChatBots, selectChannels } from "../../runtime/chat-bots.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding channels check [--workspace DIR]

Logs every chat bot in (Telegram getMe, Feishu app token and bot info) without starting
the bot, and prints one line per bot: its name and agent, or the platform's error and
what to check. Exits 1 when a bot cannot log in.

Options:
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

export const channelsCommand: Command = {
  name: "channels",
  summary: "check the chat bots' credentials (channels check)",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(context.args, { ...WORKSPACE_FLAG.option }, usage, true);
    if (values.help) return (writeLine(context.stdout, usage), 0);
    if (positionals[0] !== "check" || positionals.length > 1)
      throw new UsageError(
        positionals[0] ? `unknown subcommand "${positionals.join(" ")}"` : "missing subcommand",
        usage,
      );
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    // A platform's words may hold any credential it was given (an SDK echoing a request): none reaches the screen.
    const { redact } = createRedactor(configuredSecrets(boot.loaded, boot.agents));
    const channels = selectChannels(boot.loaded, boot.agents).filter((channel) => channel !== "console");
    if (channels.length === 0) {
      writeLine(
        context.stdout,
        "No chat channel is configured (no Telegram or Feishu credentials): `laoding start` would run the console. See docs/channels.md.",
      );
      return 0;
    }
    const { bots, warnings } = await planChatBots({
      loaded: boot.loaded,
      agents: boot.agents,
      channels,
      logger: boot.logger,
    });
    let failed = 0;
    for (const bot of bots) {
      try {
        const [ready] = await loginChatBots([bot]);
        writeLine(
          context.stdout,
          `ok      ${bot.channel} ${ready?.identity.displayName ?? "?"} (agent ${bot.agentId}; credentials: ${bot.credentials})`,
        );
      } catch (error) {
        failed += 1;
        writeLine(
          context.stdout,
          redact(
            `FAILED  ${bot.channel} (agent ${bot.agentId}; credentials: ${bot.credentials}): ${error instanceof ConfigError ? error.message : String(error)}`,
          ),
        );
      }
    }
    for (const warning of warnings) writeLine(context.stdout, `warning: ${warning}`);
    return failed === 0 ? 0 : 1;
  },
};
