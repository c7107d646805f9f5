/**
 * Orchestrator overhead per message: a zero-latency in-process model (route, one
 * file_read tool call, final answer) and the real store and toolhost child from dist/.
 * What is measured is everything but the model: storage, routing, prompt, tool round-trip.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { runCli } from "../src/cli/run-cli.js";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import type { ChatModel, ChatResponse } from "../src/llm/chat-model.js";
import { createBotRuntime } from "../src/runtime/bot-runtime.js";
import { formatMs, percentile, rssMb } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MESSAGES = 600;
const WARMUP = 50;

/** Answers instantly: routing JSON, then one file_read, then a final answer. */
function zeroLatencyModel(): ChatModel {
  const reply = (response: Partial<ChatResponse>): ChatResponse => ({
    content: null,
    toolCalls: [],
    finishReason: "stop",
    model: "zero",
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    ...response,
  });
  return {
    model: "zero",
    async complete(request) {
      if (request.purpose === "route")
        return reply({ content: '{"skills": ["skill-builder"], "intent_key": "bench", "confidence": 1}' });
      const last = request.messages.at(-1);
      if (last?.role === "tool") return reply({ content: "done" });
      return reply({
        toolCalls: [
          {
            id: "c1",
            name: "file_read",
            argumentsText: '{"path":"notes.md"}',
            arguments: { ok: true, value: { path: "notes.md" } },
          },
        ],
        finishReason: "tool_calls",
      });
    },
  };
}

export async function runOrchestratorBench(): Promise<string> {
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
  writeFileSync(join(workspaceDir, "configs/env"), "REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=none\nBOT_LOCALE=en\n");
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  const runtime = await createBotRuntime({
    loaded,
    layout,
    agents: readAgentsFile(layout.agentsFile),
    logger: pino({ level: "silent" }),
    cliEntry: join(ROOT, "dist/cli/main.js"),
    model: zeroLatencyModel(),
  });
  const send = (index: number) =>
    runtime.orchestrator.handle({
      channel: "bench",
      chatId: `c${index % 8}`,
      userId: "u",
      messageId: `m${index}`,
      text: `message ${index}`,
      agentId: "main",
      isOperator: false,
    });
  await send(-1);
  for (let index = 0; index < 8; index += 1) {
    mkdirSync(join(layout.workRoot, "main", `bench-c${index}`), { recursive: true });
    writeFileSync(join(layout.workRoot, "main", `bench-c${index}`, "notes.md"), "x".repeat(1024));
  }
  for (let index = 0; index < WARMUP; index += 1) await send(index);
  const heapBefore = process.memoryUsage().heapUsed;
  const times: number[] = [];
  for (let index = WARMUP; index < WARMUP + MESSAGES; index += 1) {
    const started = performance.now();
    await send(index);
    times.push(performance.now() - started);
  }
  const rss = process.memoryUsage().rss / 2 ** 20;
  const heapGrowth = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  const childPid = runtime.toolhosts.client("main").supervisor.pid ?? 0;
  const childRss = rssMb(childPid);
  await runtime.close();
  rmSync(base, { recursive: true, force: true });
  return [
    `${MESSAGES} sequential messages (after ${WARMUP} warm-up) over 8 chats; each turn: store user message, route (model), build prompt, react step with one file_read of 1 KiB through the real toolhost (none mode), final answer, store scratch and answer.`,
    "",
    "| per message p50 | p99 | parent RSS | heap growth over the run | toolhost child RSS |",
    "|---|---|---|---|---|",
    `| ${formatMs(percentile(times, 50))} | ${formatMs(percentile(times, 99))} | ${rss.toFixed(0)} MiB | ${heapGrowth.toFixed(1)} MiB | ${childRss.toFixed(0)} MiB |`,
  ].join("\n");
}
