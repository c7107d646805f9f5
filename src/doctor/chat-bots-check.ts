/**
 * Each chat bot logs in (Telegram getMe, Feishu app token and bot info), as `laoding
 * start` and `laoding channels check` do, one line per bot. No chat channel (the
 * console) is a pass: there is nothing to log in.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { Logger } from "../log/logger.js";
import { loginChatBots, planChatBots, selectChannels } from "../runtime/chat-bots.js";
import { failedFromError, passed, type CheckResult } from "./check-result.js";

export type ChatBotsCheckOptions = {
  loaded: LoadedConfig;
  agents: AgentDefinition[];
  logger: Logger;
  /** Said before each login (they may take seconds). */
  progress: (text: string) => void;
};

export async function checkChatBots(options: ChatBotsCheckOptions): Promise<CheckResult[]> {
  const { loaded, agents, logger } = options;
  const channels = selectChannels(loaded, agents).filter((channel) => channel !== "console");
  if (channels.length === 0)
    return [passed("chat-bots", "chat bots (not configured: `laoding start` runs the console)")];
  let planned: Awaited<ReturnType<typeof planChatBots>>;
  try {
    planned = await planChatBots({ loaded, agents, channels, logger });
  } catch (error) {
    return [failedFromError("chat-bots", "chat bots", error, "Check the bot credentials (docs/channels.md)")];
  }
  const results: CheckResult[] = [];
  for (const bot of planned.bots) {
    const id = `bot:${bot.key}`;
    const title = `${bot.channel} bot of agent ${bot.agentId} (${bot.credentials})`;
    options.progress(`logging in the ${title}`);
    try {
      const [ready] = await loginChatBots([bot]);
      const notes = planned.warnings.filter((warning) => warning.startsWith(`${bot.key}:`));
      results.push(
        passed(
          id,
          `${title} logs in as ${ready?.identity.displayName ?? "?"}`,
          notes.length > 0 ? notes.join("; ") : undefined,
        ),
      );
    } catch (error) {
      results.push(failedFromError(id, title, error, "Check the bot's credentials and the network (docs/channels.md)"));
    }
  }
  const general = planned.warnings.filter((warning) => !planned.bots.some((bot) => warning.startsWith(`${bot.key}:`)));
  if (general.length > 0 && results.length > 0) {
    const first = results[0] as CheckResult;
    results[0] = { ...first, detail: [first.detail, general.join("; ")].filter(Boolean).join("; ") };
  }
  return results;
}
