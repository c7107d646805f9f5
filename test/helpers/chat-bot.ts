/**
 * A real bot on chat channels for end-to-end tests: the test bot's runtime (real store,
 * real toolhost, fake model) with the chat gateway built exactly as `laoding start`
 * builds it, its platforms pointed at the loopback fakes through TELEGRAM_API_ROOT and
 * FEISHU_DOMAIN. `restart()` stops everything and starts again on the same workspace.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { pino } from "pino";
import { afterEach, vi } from "vitest";
import { text } from "../../src/agent/texts.js";
import { createChatGateway, type ChatGatewayOptions } from "../../src/channels/chat-gateway.js";
import { messageCap } from "../../src/agent/message-cap-reply.js";
import type { Channel } from "../../src/channels/channel.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createBotRuntime, type BotRuntime } from "../../src/runtime/bot-runtime.js";
import { loginChatBots, planChatBots, selectChannels } from "../../src/runtime/chat-bots.js";
import { isRoutingRequest, routeTo, type FakeOpenAI } from "../fakes/openai-server.js";
import { startTestBot, type TestBot } from "./bot.js";
import { CLI_ENTRY } from "./real-toolhost.js";

const running: { stop(): Promise<void>; runtime: BotRuntime }[] = [];
afterEach(() => stopChatTestBots());

/** Stops every chat test bot; call it before closing the platform fakes they talk to. */
export async function stopChatTestBots(): Promise<void> {
  for (const entry of running.splice(0).reverse()) {
    await entry.stop();
    await entry.runtime.close();
  }
}

export type ChatTestBot = {
  bot: TestBot;
  runtime: BotRuntime;
  channel: Channel;
  warnings: string[];
  stop(): Promise<void>;
  /** Stops the gateway and the runtime, then starts both again over the same workspace and database. */
  restart(): Promise<void>;
};

export type ChatTestOptions = {
  env: Record<string, string>;
  agentsJson?: unknown;
  gateway?: Partial<Pick<ChatGatewayOptions, "graceMs" | "typingRefreshMs" | "delivery">>;
};

export async function startChatTestBot(options: ChatTestOptions): Promise<ChatTestBot> {
  const bot = await startTestBot({ env: { GROUP_POLICY: "mention", ...options.env }, watchSkills: false });
  if (options.agentsJson) writeFileSync(bot.layout.agentsFile, JSON.stringify(options.agentsJson));
  // startTestBot's runtime was built before agents.json changed: build ours over the same workspace.
  await bot.runtime.close();
  const state = {
    runtime: undefined as unknown as BotRuntime,
    channel: undefined as unknown as Channel,
    done: Promise.resolve(),
    warnings: [] as string[],
  };
  const entry = { runtime: undefined as unknown as BotRuntime, stop: () => stopGateway() };
  running.push(entry);

  async function startGateway() {
    const loaded = loadConfig({ env: {}, repoRoot: bot.repoRoot, cwd: bot.repoRoot, workspaceDir: bot.workspaceDir });
    const agents = readAgentsFile(bot.layout.agentsFile);
    const logger = pino({ level: process.env.CHAT_TEST_LOG ?? "silent" });
    const planned = await planChatBots({ loaded, agents, channels: selectChannels(loaded, agents), logger });
    const bots = await loginChatBots(planned.bots);
    state.runtime = await createBotRuntime({
      loaded,
      layout: bot.layout,
      agents,
      logger,
      cliEntry: CLI_ENTRY,
      watchSkills: false,
    });
    entry.runtime = state.runtime;
    state.warnings = planned.warnings;
    state.channel = createChatGateway({
      bots,
      store: state.runtime.store.channels,
      work: state.runtime.store.chatWork,
      keeper: state.runtime.replica.keeper,
      transaction: (work) => state.runtime.store.transaction(work),
      logger,
      refusal: (message) => text("en", "notAllowed", { userId: message.userId }),
      databaseDown: () => text("en", "databaseDown"),
      graceMs: 2_000,
      delivery: { retryBaseMs: 20, retryMaxMs: 200 },
      messageCap: messageCap(loaded.config.MESSAGE_MAX_CHARS, "en"),
      ...options.gateway,
    });
    state.done = state.channel.run((message, control) => state.runtime.orchestrator.handle(message, control));
    // A start-up failure surfaces here rather than as an unhandled rejection.
    state.done.catch(() => undefined);
  }

  async function stopGateway() {
    await state.channel?.stop();
    await state.done;
  }

  await startGateway();
  return {
    bot,
    get runtime() {
      return state.runtime;
    },
    get channel() {
      return state.channel;
    },
    get warnings() {
      return state.warnings;
    },
    stop: stopGateway,
    async restart() {
      await stopGateway();
      await state.runtime.close();
      await startGateway();
    },
  };
}

/** The fake model answers every chat message with `reply(userText)`, after `delayMs(userText)`. */
export function answerEveryMessage(
  model: FakeOpenAI,
  reply: (userText: string) => string,
  delayMs: (userText: string) => number = () => 0,
): void {
  model.respond((request) => {
    if (isRoutingRequest(request)) return routeTo([], "chat");
    const userText = [...request.messages].reverse().find((message) => message.role === "user")?.content ?? "";
    return { text: reply(userText), delayMs: delayMs(userText) };
  });
}

/** Waits until `check` stops throwing or rejecting (the store or a fake caught up), up to 10 s. */
export const eventually = (check: () => void | Promise<void>) => vi.waitFor(check, { timeout: 10_000, interval: 20 });

/** A port nothing listens on right now, for a webhook server the test starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
