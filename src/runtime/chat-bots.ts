/**
 * Which chat bots run, built from the configuration: the global TELEGRAM_* / FEISHU_*
 * credentials serve the first agent; any agent may bind its own bot in agents.json (its
 * credentials named by env variable), so several agents run side by side, each with its
 * own bot. Allowlists and operators are per bot.
 */
import type { Logger } from "pino";
import { text } from "../agent/texts.js";
import { createAccessPolicy, operatorsFor, type AccessPolicy } from "../channels/access-policy.js";
import { ChannelLoginError, type ChatPlatform } from "../channels/chat-platform.js";
import type { GatewayBot } from "../channels/chat-gateway.js";
import type { AgentDefinition } from "../config/agents.js";
import { ConfigError } from "../config/config-error.js";
import type { LoadedConfig } from "../config/load-config.js";

export type ChannelName = "console" | "telegram" | "feishu";

export type PlannedBot = {
  key: string;
  agentId: string;
  channel: "telegram" | "feishu";
  /** Where its credentials come from, for messages: "TELEGRAM_BOT_TOKEN" or "agents.json ops.telegram (TG_TOKEN_OPS)". */
  credentials: string;
  platform: ChatPlatform;
  access: AccessPolicy;
};

type Credentials = {
  telegram?: { token: string; variable: string };
  feishu?: { appId: string; appSecret: string; variables: string };
};

/** MESSAGE_CHANNEL when set; otherwise every chat channel some bot has credentials for, else the console. */
export function selectChannels(loaded: LoadedConfig, agents: AgentDefinition[]): ChannelName[] {
  if (loaded.config.MESSAGE_CHANNEL) return [...new Set(loaded.config.MESSAGE_CHANNEL)];
  const credentials = agents.map((agent, index) => credentialsOf(loaded, agent, index));
  const found: ChannelName[] = [];
  if (credentials.some((entry) => entry.telegram)) found.push("telegram");
  if (credentials.some((entry) => entry.feishu)) found.push("feishu");
  return found.length > 0 ? found : ["console"];
}

/**
 * The bots to run. A platform's SDK is loaded only when its channel is in use: the Lark
 * SDK alone costs a console-only bot about 70 MiB, grammy about 18.
 */
export async function planChatBots(options: {
  loaded: LoadedConfig;
  agents: AgentDefinition[];
  channels: ChannelName[];
  logger: Logger;
}): Promise<{ bots: PlannedBot[]; warnings: string[] }> {
  const { loaded, agents, channels, logger } = options;
  const { createTelegramPlatform } = channels.includes("telegram")
    ? await import("../channels/telegram/telegram-platform.js")
    : { createTelegramPlatform: undefined };
  const { createFeishuPlatform } = channels.includes("feishu")
    ? await import("../channels/feishu/feishu-platform.js")
    : { createFeishuPlatform: undefined };
  const { config } = loaded;
  const bots: PlannedBot[] = [];
  const warnings: string[] = [];
  const locale = config.BOT_LOCALE;
  agents.forEach((agent, index) => {
    const credentials = credentialsOf(loaded, agent, index);
    if (createTelegramPlatform && credentials.telegram) {
      const own = agent.telegram;
      const { token, variable } = credentials.telegram;
      const webhook = !own && config.TELEGRAM_WEBHOOK_URL ? telegramWebhook(loaded) : undefined;
      bots.push({
        key: `telegram:${agent.id}`,
        agentId: agent.id,
        channel: "telegram",
        credentials: variable,
        platform: createTelegramPlatform({
          token,
          tokenVariable: variable,
          apiRoot: config.TELEGRAM_API_ROOT,
          commands: [
            { command: "help", description: text(locale, "menuHelp") },
            { command: "new", description: text(locale, "menuNew") },
            { command: "capability_gaps", description: text(locale, "menuGaps") },
            { command: "reload_skills", description: text(locale, "menuReload") },
          ],
          ...(webhook ? { webhook } : {}),
          logger,
        }),
        access: createAccessPolicy({
          ...allowed(own ? own.allowedUsers : config.TELEGRAM_ALLOWED_USERS),
          operators: [...operatorsFor("telegram", config.OPERATOR_IDS), ...(own?.operators ?? [])],
          groupPolicy: config.GROUP_POLICY,
        }),
      });
    }
    if (createFeishuPlatform && credentials.feishu) {
      const own = agent.feishu;
      const webhook =
        !own && config.FEISHU_WEBHOOK_PORT > 0
          ? {
              host: config.WEBHOOK_HOST,
              port: config.FEISHU_WEBHOOK_PORT,
              path: config.FEISHU_WEBHOOK_PATH,
              ...(config.FEISHU_ENCRYPT_KEY ? { encryptKey: config.FEISHU_ENCRYPT_KEY } : {}),
              ...(config.FEISHU_VERIFICATION_TOKEN ? { verificationToken: config.FEISHU_VERIFICATION_TOKEN } : {}),
            }
          : undefined;
      if (webhook && !webhook.verificationToken)
        warnings.push(
          "Feishu webhook without FEISHU_VERIFICATION_TOKEN: events are not checked for the app's token; set it (and FEISHU_ENCRYPT_KEY)",
        );
      bots.push({
        key: `feishu:${agent.id}`,
        agentId: agent.id,
        channel: "feishu",
        credentials: credentials.feishu.variables,
        platform: createFeishuPlatform({
          appId: credentials.feishu.appId,
          appSecret: credentials.feishu.appSecret,
          credentialVariables: credentials.feishu.variables,
          domain: config.FEISHU_DOMAIN,
          ...(webhook ? { webhook } : {}),
          logger,
        }),
        access: createAccessPolicy({
          ...allowed(own ? own.allowedUsers : config.FEISHU_ALLOWED_USERS),
          operators: [...operatorsFor("feishu", config.OPERATOR_IDS), ...(own?.operators ?? [])],
          groupPolicy: config.GROUP_POLICY,
        }),
      });
    }
  });
  for (const channel of channels) {
    if (channel !== "console" && !bots.some((bot) => bot.channel === channel)) {
      throw new ConfigError(`MESSAGE_CHANNEL includes ${channel}, but no agent has ${channel} credentials`, {
        hint:
          channel === "telegram"
            ? "Set TELEGRAM_BOT_TOKEN (from @BotFather), or give an agent its own bot in agents.json"
            : "Set FEISHU_APP_ID and FEISHU_APP_SECRET, or give an agent its own app in agents.json",
      });
    }
  }
  for (const bot of bots) {
    if (bot.access.openToEveryone) {
      const listName = bot.credentials.startsWith("agents.json")
        ? `allowedUsers of agent ${bot.agentId}'s ${bot.channel} bot in agents.json`
        : `${bot.channel.toUpperCase()}_ALLOWED_USERS`;
      warnings.push(
        `${bot.key}: no allowlist, so everyone who finds the bot can talk to it; set ${listName} (user ids, or * to allow everyone on purpose)`,
      );
    }
  }
  return { bots, warnings };
}

/** Logs every bot in; the first that cannot stops start-up, with the platform's words and what to check. */
export async function loginChatBots(bots: PlannedBot[]): Promise<GatewayBot[]> {
  return Promise.all(
    bots.map(async (bot) => {
      try {
        return {
          key: bot.key,
          agentId: bot.agentId,
          platform: bot.platform,
          access: bot.access,
          identity: await bot.platform.login(),
        };
      } catch (error) {
        if (error instanceof ChannelLoginError)
          throw new ConfigError(`${bot.channel} bot of agent ${bot.agentId} cannot log in: ${error.message}`, {
            hint: error.hint,
            cause: error,
          });
        throw error;
      }
    }),
  );
}

function credentialsOf(loaded: LoadedConfig, agent: AgentDefinition, index: number): Credentials {
  const { config } = loaded;
  const named = (name: string, field: string) => {
    const value = loaded.declaredValue(name);
    if (value === undefined || value.trim() === "") {
      throw new ConfigError(`agents.json: agent "${agent.id}": ${field} names ${name}, which is not set`, {
        hint: `Set ${name} in the environment or the workspace's configs/env`,
      });
    }
    return value.trim();
  };
  const result: Credentials = {};
  if (agent.telegram)
    result.telegram = {
      token: named(agent.telegram.tokenEnv, "telegram.tokenEnv"),
      variable: `agents.json ${agent.id}.telegram (${agent.telegram.tokenEnv})`,
    };
  else if (index === 0 && config.TELEGRAM_BOT_TOKEN)
    result.telegram = { token: config.TELEGRAM_BOT_TOKEN, variable: "TELEGRAM_BOT_TOKEN" };
  if (agent.feishu) {
    result.feishu = {
      appId: named(agent.feishu.appIdEnv, "feishu.appIdEnv"),
      appSecret: named(agent.feishu.appSecretEnv, "feishu.appSecretEnv"),
      variables: `agents.json ${agent.id}.feishu (${agent.feishu.appIdEnv}, ${agent.feishu.appSecretEnv})`,
    };
  } else if (index === 0 && config.FEISHU_APP_ID && config.FEISHU_APP_SECRET) {
    result.feishu = {
      appId: config.FEISHU_APP_ID,
      appSecret: config.FEISHU_APP_SECRET,
      variables: "FEISHU_APP_ID and FEISHU_APP_SECRET",
    };
  }
  return result;
}

function telegramWebhook(loaded: LoadedConfig) {
  const { config } = loaded;
  if (!config.TELEGRAM_WEBHOOK_SECRET) {
    throw new ConfigError("TELEGRAM_WEBHOOK_URL is set but TELEGRAM_WEBHOOK_SECRET is not", {
      hint: "Set TELEGRAM_WEBHOOK_SECRET to 16 or more random letters and digits: Telegram sends it with every update and the bot refuses requests without it",
    });
  }
  return {
    url: config.TELEGRAM_WEBHOOK_URL as string,
    secretToken: config.TELEGRAM_WEBHOOK_SECRET,
    host: config.WEBHOOK_HOST,
    port: config.TELEGRAM_WEBHOOK_PORT,
  };
}

function allowed(list: readonly string[] | undefined): { allowedUsers?: readonly string[] } {
  // An empty value reads as unset: nobody at all would be a strange thing to ask for.
  return list === undefined || list.length === 0 ? {} : { allowedUsers: list };
}
