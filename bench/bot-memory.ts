/**
 * The bot's own memory with one agent: `laoding start` with `npm start`'s Node flags, on the
 * console channel (the README's first command), an OpenAI-compatible fake on loopback as its model, and
 * chat messages that each make one file.read through the agent's sandboxed child. RSS of
 * the bot process and of its toolhost child (bwrap, its init and Node), after start-up
 * and after the messages.
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { isRoutingRequest, routeTo, startFakeOpenAI } from "../test/fakes/openai-server.js";
import { rssMb, treeRssMb } from "./stats.js";

export type BotMemory = { messages: number; startRss: number; botRss: number; childRss: number };

/** The Node flags `npm start` gives the bot (package.json), so the figure is the README's bot. */
function npmStartFlags(): string[] {
  const start = (
    JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: { start: string } }
  ).scripts.start;
  return start.split(/\s+/).filter((word) => word.startsWith("--"));
}

export async function measureBotMemory(
  entry: string,
  messages: number,
  seedWorkspace: (sandbox: string) => Promise<{ workspaceDir: string; file: string }>,
): Promise<BotMemory> {
  const { workspaceDir, file } = await seedWorkspace("bwrap");
  const model = await startFakeOpenAI();
  model.respond((request) => {
    if (isRoutingRequest(request)) return routeTo([], "bench");
    if (request.messages.at(-1)?.role === "tool") return { text: "done" };
    return { toolCalls: [{ name: "file_read", arguments: { path: file } }] };
  });
  const bot = spawn(process.execPath, [...npmStartFlags(), entry, "start", "--workspace", workspaceDir], {
    env: {
      PATH: process.env.PATH ?? "",
      LLM_BASE_URL: model.url,
      LLM_API_KEY: "bench",
      LLM_MODEL: "fake",
      LOG_LEVEL: "warn",
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let answers = 0;
  let waiting: (() => void) | undefined;
  bot.stdout.on("data", (chunk: Buffer) => {
    answers += chunk.toString("utf8").split("done").length - 1;
    if (waiting) waiting();
  });
  const answered = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the bot answered ${answers} of ${count} messages within 60 s`)),
        60_000,
      );
      waiting = () => {
        if (answers < count) return;
        clearTimeout(timer);
        waiting = undefined;
        resolve();
      };
      waiting();
    });
  try {
    bot.stdin.write("hello\n");
    await answered(1);
    const startRss = rssMb(bot.pid ?? 0);
    for (let index = 2; index <= messages; index += 1) {
      bot.stdin.write(`read the bench file, please (${index})\n`);
      await answered(index);
    }
    const botRss = rssMb(bot.pid ?? 0);
    const childRss = treeRssMb(bot.pid ?? 0) - botRss;
    return { messages, startRss, botRss, childRss };
  } finally {
    bot.stdin.end();
    await new Promise((resolve) => (bot.exitCode !== null ? resolve(undefined) : bot.once("exit", resolve)));
    await model.close();
    rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  }
}
