/**
 * `laoding start` hands STREAM_REPLIES and STREAM_EDIT_INTERVAL_MS to the chat gateway: the
 * real CLI process on Telegram and Feishu at once (the loopback fakes, a model streaming
 * its answer), Telegram streaming and Feishu not.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRoutingRequest, routeTo, startFakeOpenAI } from "../fakes/openai-server.js";
import { FAKE_APP_ID, FAKE_APP_SECRET, startFakeFeishu } from "../fakes/feishu-server.js";
import { startFakeTelegram } from "../fakes/telegram-server.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const INTERVAL_MS = 1_500;
/** About ninety streamed pieces, 40 ms apart: over three seconds of answer, two intervals and more. */
const ANSWER = Array.from(
  { length: 6 },
  (_, index) => `Step ${index + 1}: check the disk, then the logs, then the service.`,
).join(" ");

describe("laoding start with STREAM_REPLIES=on,feishu=off", () => {
  it("streams on Telegram at STREAM_EDIT_INTERVAL_MS, and answers Feishu whole", async () => {
    const [telegram, feishu, model] = await Promise.all([
      startFakeTelegram(),
      startFakeFeishu(),
      startFakeOpenAI({ chunkDelayMs: 40 }),
    ]);
    closers.push(
      () => telegram.close(),
      () => feishu.close(),
      () => model.close(),
    );
    telegram.addBot("42:GOOD", "laoding_bot");
    model.respond((request) => (isRoutingRequest(request) ? routeTo([], "chat") : { text: ANSWER }));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "start", "--workspace", join(tempDir(), "rt")],
      {
        cwd: REAL_REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          LOG_LEVEL: "info",
          BOT_LOCALE: "en",
          TOOLHOST_SANDBOX: "none",
          TELEGRAM_BOT_TOKEN: "42:GOOD",
          TELEGRAM_API_ROOT: telegram.apiRoot,
          TELEGRAM_ALLOWED_USERS: "*",
          FEISHU_APP_ID: FAKE_APP_ID,
          FEISHU_APP_SECRET: FAKE_APP_SECRET,
          FEISHU_DOMAIN: feishu.domain,
          FEISHU_ALLOWED_USERS: "*",
          LLM_BASE_URL: model.url,
          LLM_MODEL: "fake",
          LLM_API_KEY: "sk-x",
          LLM_MAX_RETRIES: "0",
          STREAM_REPLIES: "on,feishu=off",
          STREAM_EDIT_INTERVAL_MS: String(INTERVAL_MS),
        },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    closers.push(async () => void child.kill("SIGKILL"));
    let stderr = "";
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (stderr.includes("LaodingBot ready")) resolve();
      });
      void exited.then(() => reject(new Error(`exited before ready:\n${stderr}`)));
    });

    await feishu.longConnection.connected();
    telegram.userMessage("42:GOOD", { chatId: 501, userId: 7, text: "the service is down" });
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "the service is down" }));
    await telegram.waitFor((calls) => calls.some((call) => call.method === "sendMessage"), 30_000);
    await feishu.waitForSent(1, 30_000);

    // Telegram: drafts as the answer grew, never two closer than the interval; the final answer a new message.
    const drafts = telegram.calls.filter((call) => call.method === "sendMessageDraft");
    expect(drafts.length, stderr).toBeGreaterThanOrEqual(2);
    for (const [index, draft] of drafts.entries()) {
      expect(draft.body.chat_id).toBe(501);
      if (index > 0) expect(draft.at - (drafts[index - 1] as { at: number }).at).toBeGreaterThanOrEqual(INTERVAL_MS);
      expect(ANSWER.startsWith(String(draft.body.text))).toBe(true);
    }
    expect(telegram.sent().map((call) => call.body.text)).toEqual([ANSWER]);
    // Feishu: no card, the answer whole, as before streaming.
    expect(feishu.cardUpdates).toEqual([]);
    expect(feishu.sent.map((message) => [message.msgType, message.text])).toEqual([["post", ANSWER]]);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    // A whole bot process under tsx: on a loaded machine its start alone can take half a minute.
  }, 90_000);
});
