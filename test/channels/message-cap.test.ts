/**
 * Issue 32 item 9, the chat door: a message over MESSAGE_MAX_CHARS (default 16,000
 * characters) never reaches the model. A 1 MB Telegram message, a 300 KB Feishu message and
 * a 1 MB console line each get exactly one polite reply; a re-delivery gets none; the text
 * is not stored. The real gateway, store, orchestrator and toolhost against the loopback
 * fakes of Telegram, Feishu and the model; the console as the real `laoding chat` process.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codePointCount } from "../../src/channels/message-cap.js";
import {
  answerEveryMessage,
  eventually,
  startChatTestBot,
  stopChatTestBots,
  type ChatTestBot,
} from "../helpers/chat-bot.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { FAKE_APP_ID, FAKE_APP_SECRET, startFakeFeishu, type FakeFeishu } from "../fakes/feishu-server.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram-server.js";

const TOKEN = "123456:TEST-token";
const ONE_MB = 1024 * 1024;
/** The polite reply, in English (BOT_LOCALE=en), with the default limit. */
const tooLongReply = (chars: number) =>
  `Sorry, that message is too long for me (${chars} characters); I can read at most 16000 characters at a time. Please shorten it, or split it into several messages.`;

/** Every text the model was shown, joined: the big message must not be in it. */
const seenByModel = (model: FakeOpenAI) =>
  model.requests.flatMap((request) => request.messages.map((message) => message.content ?? "")).join("\n");
const storedTextBytes = async (chat: ChatTestBot) =>
  (await chat.runtime.store.sql.get<{ inbox: number; history: number }>(
    "SELECT (SELECT COALESCE(MAX(length(message)), 0) FROM channel_inbox) AS inbox, (SELECT COALESCE(MAX(length(content)), 0) FROM messages) AS history",
  )) as { inbox: number; history: number };

describe("MESSAGE_MAX_CHARS on Telegram", () => {
  let telegram: FakeTelegram;
  beforeEach(async () => {
    telegram = await startFakeTelegram();
  });
  afterEach(async () => {
    await stopChatTestBots();
    await telegram.close();
  });

  async function startBot(): Promise<ChatTestBot> {
    telegram.addBot(TOKEN, "laoding_bot");
    const chat = await startChatTestBot({
      env: { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: telegram.apiRoot, TELEGRAM_ALLOWED_USERS: "*" },
    });
    answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
    return chat;
  }
  const textsTo = (chatId: number) =>
    telegram
      .sent()
      .filter((call) => call.method === "sendMessage" && Number(call.body.chat_id) === chatId)
      .map((call) => String(call.body.text));

  it("a 1 MB message gets one polite reply, the model sees nothing of it, and a re-delivery gets no second reply", async () => {
    const chat = await startBot();
    const big = `start ${"x".repeat(ONE_MB)}`;
    const update = telegram.userMessage(TOKEN, { chatId: 601, userId: 77, text: big });
    await telegram.waitFor(() => textsTo(601).length >= 1);
    // Re-delivered (Telegram re-sends an update it thinks unconfirmed), then a normal message.
    telegram.pushUpdate(TOKEN, update);
    telegram.userMessage(TOKEN, { chatId: 601, userId: 77, text: "a short one" });
    await telegram.waitFor(() => textsTo(601).length >= 2);
    await eventually(async () =>
      expect(
        await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_outbox WHERE status = 'sent'"),
      ).toEqual({ n: 2 }),
    );
    expect(textsTo(601)).toEqual([tooLongReply(big.length), "You said: a short one"]);
    expect(seenByModel(chat.bot.fake)).not.toContain("x".repeat(1000));
    // Not kept either: neither the inbox nor the conversation holds its text.
    const stored = await storedTextBytes(chat);
    expect(stored.inbox).toBeLessThan(10_000);
    expect(stored.history).toBeLessThan(10_000);
  });

  it("counts characters, not UTF-16 units: 16,000 emoji fit, 16,001 do not", async () => {
    const chat = await startBot();
    const fits = "😀".repeat(16_000);
    expect(fits.length).toBe(32_000);
    expect(codePointCount(fits)).toBe(16_000);
    telegram.userMessage(TOKEN, { chatId: 602, userId: 77, text: fits });
    await telegram.waitFor(() => textsTo(602).length >= 1);
    expect(seenByModel(chat.bot.fake)).toContain(fits);
    telegram.userMessage(TOKEN, { chatId: 603, userId: 77, text: `${fits}😀` });
    await telegram.waitFor(() => textsTo(603).length >= 1);
    expect(textsTo(603)).toEqual([tooLongReply(16_001)]);
  });
});

describe("MESSAGE_MAX_CHARS on Feishu", () => {
  let feishu: FakeFeishu;
  beforeEach(async () => {
    feishu = await startFakeFeishu();
  });
  afterEach(async () => {
    await stopChatTestBots();
    await feishu.close();
  });

  it("a 300 KB message gets one polite reply, the model sees nothing of it, and a re-delivery gets no second reply", async () => {
    const chat = await startChatTestBot({
      env: {
        FEISHU_APP_ID: FAKE_APP_ID,
        FEISHU_APP_SECRET: FAKE_APP_SECRET,
        FEISHU_DOMAIN: feishu.domain,
        FEISHU_ALLOWED_USERS: "*",
      },
    });
    answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
    await feishu.longConnection.connected();
    const big = "长".repeat(100 * 1024);
    const event = feishu.messageEvent({ text: big, eventId: "ev_big", messageId: "om_big" });
    await feishu.longConnection.sendEvent(event);
    await feishu.waitForSent(1);
    await feishu.longConnection.sendEvent(event);
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "a short one" }));
    await feishu.waitForSent(2);
    await eventually(async () =>
      expect(
        await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_outbox WHERE status = 'sent'"),
      ).toEqual({ n: 2 }),
    );
    expect(feishu.sent.map((message) => message.text)).toEqual([tooLongReply(big.length), "You said: a short one"]);
    expect(feishu.sent[0]).toMatchObject({ kind: "reply", replyTo: "om_big" });
    expect(seenByModel(chat.bot.fake)).not.toContain("长".repeat(1000));
    const stored = await storedTextBytes(chat);
    expect(stored.inbox).toBeLessThan(10_000);
    expect(stored.history).toBeLessThan(10_000);
  });
});

describe("MESSAGE_MAX_CHARS on the console", () => {
  it("`laoding chat` answers a 1 MB line with the polite reply and sends the model only the next line", async () => {
    const model = await startFakeOpenAI();
    try {
      answerEveryMessage(model, (userText) => `You said: ${userText}`);
      const workspaceDir = join(tempDir(), "rt");
      const child = spawn(
        process.execPath,
        ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
        {
          cwd: REAL_REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? "",
            LOG_LEVEL: "silent",
            BOT_LOCALE: "en",
            LLM_BASE_URL: model.url,
            LLM_MODEL: "fake",
            LLM_API_KEY: "sk-x",
            LLM_MAX_RETRIES: "0",
            TOOLHOST_SANDBOX: "none",
          },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      const big = "y".repeat(ONE_MB);
      child.stdin.end(`${big}\nhello there\n`);
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).toBe(0);
      expect(stdout.trim().split("\n")).toEqual([tooLongReply(ONE_MB), "You said: hello there"]);
      expect(seenByModel(model)).not.toContain("y".repeat(1000));
    } finally {
      await model.close();
    }
  }, 60_000);
});
