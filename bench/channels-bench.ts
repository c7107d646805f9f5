/**
 * Chat channels end to end on loopback: the fake Telegram Bot API (test/fakes), grammY
 * long polling, the chat gateway (dedup, inbox, outbox, per-chat queue, typing) and the
 * orchestrator with a zero-latency model answering plain text (no tool call), so what is
 * measured is the channel's own cost. The console baseline calls the orchestrator the
 * way the console channel does.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { messageCap } from "../src/agent/message-cap-reply.js";
import { createChatGateway } from "../src/channels/chat-gateway.js";
import { runCli } from "../src/cli/run-cli.js";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import type { ChatModel, ChatResponse } from "../src/llm/chat-model.js";
import { createBotRuntime } from "../src/runtime/bot-runtime.js";
import { loginChatBots, planChatBots } from "../src/runtime/chat-bots.js";
import { startFakeTelegram, type TelegramCall } from "../test/fakes/telegram-server.js";
import { formatMs, percentile } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "1:BENCH";
const LATENCY_MESSAGES = 200;
const ONE_CHAT_MESSAGES = 500;
const TOTAL_MESSAGES = 10_000;

function zeroLatencyModel(): ChatModel {
  const reply = (content: string): ChatResponse => ({
    content,
    toolCalls: [],
    finishReason: "stop",
    model: "zero",
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  });
  return {
    model: "zero",
    async complete(request) {
      return reply(
        request.purpose === "route" ? '{"skills": [], "intent_key": "bench", "confidence": 1}' : "ok, done.",
      );
    },
  };
}

export async function runChannelsBench(): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), "laoding-bench-"));
  chmodSync(base, 0o755);
  const workspaceDir = join(base, "rt");
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  await runCli({
    args: ["init", "--workspace", workspaceDir],
    env: { LOG_LEVEL: "silent" },
    cwd: ROOT,
    repoRoot: ROOT,
    stdout: sink,
    stderr: sink,
    stdin: process.stdin,
  });
  const telegram = await startFakeTelegram();
  telegram.addBot(TOKEN, "bench_bot");
  writeFileSync(
    join(workspaceDir, "configs/env"),
    `REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=none\nBOT_LOCALE=en\nTELEGRAM_BOT_TOKEN=${TOKEN}\nTELEGRAM_API_ROOT=${telegram.apiRoot}\nTELEGRAM_ALLOWED_USERS=*\n`,
  );
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  const logger = pino({ level: "silent" });
  const runtime = await createBotRuntime({
    loaded,
    layout,
    agents,
    logger,
    cliEntry: join(ROOT, "dist/cli/main.js"),
    model: zeroLatencyModel(),
    watchSkills: false,
  });

  // Console baseline: the orchestrator called directly, one message at a time.
  let counter = 0;
  const consoleSend = () => {
    counter += 1;
    return runtime.orchestrator.handle({
      channel: "console",
      chatId: "local",
      userId: "console",
      messageId: `c${counter}`,
      text: `message ${counter}`,
      agentId: "main",
      isOperator: true,
    });
  };
  for (let index = 0; index < 20; index += 1) await consoleSend();
  const consoleTimes: number[] = [];
  for (let index = 0; index < LATENCY_MESSAGES; index += 1) {
    const started = performance.now();
    await consoleSend();
    consoleTimes.push(performance.now() - started);
  }

  const planned = await planChatBots({ loaded, agents, channels: ["telegram"], logger });
  const gateway = createChatGateway({
    bots: await loginChatBots(planned.bots),
    store: runtime.store.channels,
    work: runtime.store.chatWork,
    keeper: runtime.replica.keeper,
    transaction: (work) => runtime.store.transaction(work),
    logger,
    refusal: () => "no",
    graceMs: 5_000,
    messageCap: messageCap(loaded.config.MESSAGE_MAX_CHARS, "en"),
  });
  const running = gateway.run((message, control) => runtime.orchestrator.handle(message, control));

  // Counts sendMessage calls without rescanning the call list (it is emptied between phases).
  let sent = 0;
  let scanned = 0;
  const countSent = (calls: TelegramCall[]) => {
    for (; scanned < calls.length; scanned += 1) if (calls[scanned]?.method === "sendMessage") sent += 1;
  };
  const waitForSent = (target: number) => telegram.waitFor((calls) => (countSent(calls), sent >= target), 600_000);
  const resetCalls = () => {
    countSent(telegram.calls);
    telegram.calls.length = 0;
    scanned = 0;
  };
  let userMessages = 0;
  const message = (chatId: number) => {
    userMessages += 1;
    telegram.userMessage(TOKEN, { chatId, userId: chatId, text: `message ${userMessages}` });
  };

  // Latency: one message at a time, from the update being available to sendMessage arriving.
  for (let index = 0; index < 20; index += 1) {
    message(1);
    await waitForSent(sent + 1);
  }
  const channelTimes: number[] = [];
  for (let index = 0; index < LATENCY_MESSAGES; index += 1) {
    const started = performance.now();
    message(1);
    await waitForSent(sent + 1);
    channelTimes.push(performance.now() - started);
  }
  resetCalls();

  const throughput = async (count: number, chats: number) => {
    const target = sent + count;
    const started = performance.now();
    for (let index = 0; index < count; index += 1) message(1000 + (index % chats));
    await waitForSent(target);
    const seconds = (performance.now() - started) / 1000;
    resetCalls();
    return count / seconds;
  };
  const oneChat = await throughput(ONE_CHAT_MESSAGES, 1);
  const fiftyChats = await throughput(TOTAL_MESSAGES - userMessages, 50);
  global.gc?.();
  const memory = process.memoryUsage();

  await gateway.stop();
  await running;
  await runtime.close();
  await telegram.close();
  rmSync(base, { recursive: true, force: true });
  const added = percentile(channelTimes, 50) - percentile(consoleTimes, 50);
  return [
    `Telegram through grammY long polling against the loopback fake Bot API (same process), the real gateway, SQLite store and orchestrator; the model answers instantly with text (route + answer, no tool call). Latency: ${LATENCY_MESSAGES} sequential messages, from the update being available to the fake receiving sendMessage (typing, dedup, inbox, outbox and HTTP both ways included). Throughput: every message queued at once, until the last reply arrived. Memory: process RSS and heap after ${TOTAL_MESSAGES.toLocaleString("en")} messages (fake server included).`,
    "",
    "| console p50 | console p99 | Telegram p50 | Telegram p99 | added per message (p50) | msgs/s, 1 chat | msgs/s, 50 chats | RSS after 10k | heap after 10k |",
    "|---|---|---|---|---|---|---|---|---|",
    `| ${formatMs(percentile(consoleTimes, 50))} | ${formatMs(percentile(consoleTimes, 99))} | ${formatMs(percentile(channelTimes, 50))} | ${formatMs(percentile(channelTimes, 99))} | ${formatMs(added)} | ${oneChat.toFixed(0)} | ${fiftyChats.toFixed(0)} | ${(memory.rss / 2 ** 20).toFixed(0)} MiB | ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB |`,
  ].join("\n");
}
