/**
 * Telegram end to end: grammY against the loopback fake Bot API, the real gateway, store,
 * orchestrator and toolhost, and the fake model.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  answerEveryMessage,
  eventually,
  freePort,
  startChatTestBot,
  stopChatTestBots,
  type ChatTestBot,
} from "../helpers/chat-bot.js";
import { startFakeTelegram, type FakeTelegram, type TelegramCall } from "../fakes/telegram-server.js";

const TOKEN = "123456:TEST-token";
let telegram: FakeTelegram;

beforeEach(async () => {
  telegram = await startFakeTelegram();
});
afterEach(async () => {
  await stopChatTestBots();
  await telegram.close();
});

async function startBot(
  env: Record<string, string> = {},
  extra: Partial<Parameters<typeof startChatTestBot>[0]> = {},
): Promise<ChatTestBot> {
  telegram.addBot(TOKEN, "laoding_bot");
  const chat = await startChatTestBot({
    env: {
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_ALLOWED_USERS: "*",
      OPERATOR_IDS: "telegram:42",
      ...env,
    },
    ...extra,
  });
  answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
  return chat;
}

const textsTo = (chatId: number) =>
  telegram
    .sent()
    .filter((call) => Number(call.body.chat_id) === chatId)
    .map((call) => String(call.body.text));
const sentTexts = (calls: TelegramCall[]) =>
  calls.filter((call) => call.method === "sendMessage").map((call) => String(call.body.text));

describe("Telegram", () => {
  it("answers a private message, shows typing, registers the commands, and stores both sides", async () => {
    const chat = await startBot();
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "hello **there**" });
    await telegram.waitFor((calls) => sentTexts(calls).length === 1);
    const [reply] = telegram.sent();
    expect(reply?.body).toMatchObject({ chat_id: "501", text: "You said: hello <b>there</b>", parse_mode: "HTML" });
    expect(reply?.body.reply_parameters).toBeUndefined();
    expect(
      telegram.calls.some(
        (call) =>
          call.method === "sendChatAction" && call.body.action === "typing" && Number(call.body.chat_id) === 501,
      ),
    ).toBe(true);
    const menu = telegram.calls.find((call) => call.method === "setMyCommands")?.body.commands as { command: string }[];
    expect(menu.map((command) => command.command)).toEqual(["help", "new", "capability_gaps", "reload_skills"]);

    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status FROM channel_outbox")).toEqual([{ status: "sent" }]),
    );
    const rows = await chat.runtime.store.sql.all(
      "SELECT m.role, m.content, m.user_id AS userId, s.channel, s.chat_id AS chatId FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.kind = 'chat' ORDER BY m.id",
    );
    expect(rows).toEqual([
      { role: "user", content: "hello **there**", userId: "77", channel: "telegram", chatId: "501" },
      { role: "assistant", content: "You said: hello **there**", userId: null, channel: "telegram", chatId: "501" },
    ]);
  });

  it("answers commands, with the bot's name too, and refuses operator commands to non-operators", async () => {
    await startBot();
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "/help" });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "/capability_gaps@laoding_bot" });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "/reload_skills" });
    telegram.userMessage(TOKEN, { chatId: 502, userId: 42, text: "/capability_gaps@laoding_bot" });
    await telegram.waitFor(() => textsTo(501).length === 3 && textsTo(502).length === 1);
    const [help, gaps, reload] = textsTo(501);
    expect(help).toContain("/new start a fresh conversation");
    expect(help).not.toContain("/capability_gaps");
    // The refused user learns their own id and the command an operator runs to admit them.
    expect(gaps).toMatch(
      /^\/capability_gaps is for operators only\. Your id is telegram:77; an operator can admit you with: (<code>|`)?laoding operators add telegram:77 --agent [a-z0-9_-]+(<\/code>|`)?$/,
    );
    expect(reload).toMatch(/^\/reload_skills is for operators only\. Your id is telegram:77;/);
    expect(textsTo(502)[0]).toMatch(/^No capability gaps in the last 72 h\.$/);
  });

  it("in a group answers only when mentioned or replied to, without its own mention in the text", async () => {
    const chat = await startBot();
    telegram.userMessage(TOKEN, {
      chatId: -900,
      userId: 77,
      text: "just chatting among ourselves",
      chatType: "supergroup",
    });
    telegram.userMessage(TOKEN, { chatId: -900, userId: 77, text: "/help@other_bot", chatType: "supergroup" });
    telegram.userMessage(TOKEN, {
      chatId: -900,
      userId: 77,
      text: "@laoding_bot what time is it",
      chatType: "supergroup",
    });
    telegram.userMessage(TOKEN, {
      chatId: -900,
      userId: 78,
      text: "and now?",
      chatType: "supergroup",
      replyToBot: true,
    });
    await telegram.waitFor(() => textsTo(-900).length === 2);
    expect(textsTo(-900)).toEqual(["You said: what time is it", "You said: and now?"]);
    // In a group the answer quotes the message it answers.
    expect(telegram.sent()[0]?.body.reply_parameters).toMatchObject({ message_id: expect.any(Number) });
    const userTexts = await chat.runtime.store.sql.all("SELECT content FROM messages WHERE role = 'user' ORDER BY id");
    expect(userTexts).toEqual([{ content: "what time is it" }, { content: "and now?" }]);
  });

  it("the same update delivered three times, even across a restart, gets one reply", async () => {
    const chat = await startBot();
    const update = telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "once please" });
    telegram.pushUpdate(TOKEN, update);
    telegram.pushUpdate(TOKEN, update);
    await telegram.waitFor(() => textsTo(501).length === 1);
    await chat.restart();
    telegram.pushUpdate(TOKEN, update);
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "second" });
    await telegram.waitFor(() => textsTo(501).length === 2);
    expect(textsTo(501)).toEqual(["You said: once please", "You said: second"]);
  });

  it("a restart between storing the reply and sending it delivers it exactly once", async () => {
    const chat = await startBot({}, { gateway: { delivery: { retryBaseMs: 60_000, retryMaxMs: 60_000 } } });
    telegram.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "survive this" });
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status, attempts FROM channel_outbox")).toEqual([
        { status: "pending", attempts: 1 },
      ]),
    );
    // The bot stops while waiting to retry: the reply stays stored, unsent.
    await chat.restart();
    await telegram.waitFor(() => textsTo(501).length === 2);
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status, attempts FROM channel_outbox")).toEqual([
        { status: "sent", attempts: 2 },
      ]),
    );
    // Two calls: the refused one before the restart and the acknowledged one after it, nothing more.
    expect(textsTo(501)).toEqual(["You said: survive this", "You said: survive this"]);
    expect(await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM messages WHERE role = 'assistant'")).toEqual({
      n: 1,
    });
  });

  it("honours 429 retry_after", async () => {
    await startBot();
    telegram.failNext("sendMessage", {
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "slowly" });
    await telegram.waitFor(() => textsTo(501).length === 2, 15_000);
    const [refused, accepted] = telegram.sent();
    expect((accepted?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(accepted?.body.text).toBe("You said: slowly");
  });

  it("splits a long answer at paragraph boundaries under 4096 characters", async () => {
    const chat = await startBot();
    const paragraphs = Array.from({ length: 12 }, (_, index) => `Paragraph ${index}: ${"word ".repeat(150).trim()}`);
    answerEveryMessage(chat.bot.fake, () => paragraphs.join("\n\n"));
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "tell me a lot" });
    await eventually(async () =>
      expect(
        await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_outbox WHERE status = 'sent'"),
      ).toEqual({ n: 3 }),
    );
    const parts = textsTo(501);
    expect(parts).toHaveLength(3);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4096);
      expect(part.startsWith("Paragraph ")).toBe(true);
    }
    expect(parts.join("\n\n")).toBe(paragraphs.join("\n\n"));
  });

  it("resends as plain text when Telegram rejects the entities", async () => {
    await startBot();
    telegram.failNext("sendMessage", {
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: unsupported start tag "b" at byte offset 3',
    });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "**bold**" });
    await telegram.waitFor(() => textsTo(501).length === 2);
    const [html, plain] = telegram.sent();
    expect(html?.body).toMatchObject({ parse_mode: "HTML", text: "You said: <b>bold</b>" });
    expect(plain?.body.parse_mode).toBeUndefined();
    expect(plain?.body.text).toBe("You said: **bold**");
  });

  it("runs two chats in parallel while each chat keeps its order", async () => {
    const chat = await startBot();
    answerEveryMessage(
      chat.bot.fake,
      (userText) => `done ${userText}`,
      (userText) => (userText === "a1" ? 400 : 0),
    );
    telegram.userMessage(TOKEN, { chatId: 601, userId: 77, text: "a1" });
    telegram.userMessage(TOKEN, { chatId: 601, userId: 77, text: "a2" });
    await eventually(() =>
      expect(chat.bot.fake.requests.some((request) => request.messages.at(-1)?.content === "a1")).toBe(true),
    );
    telegram.userMessage(TOKEN, { chatId: 602, userId: 78, text: "b1" });
    await telegram.waitFor(() => sentTexts(telegram.calls).length === 3);
    expect(sentTexts(telegram.calls)).toEqual(["done b1", "done a1", "done a2"]);
  });

  it("answers an allowlisted user and politely refuses another", async () => {
    await startBot({ TELEGRAM_ALLOWED_USERS: "77" });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "hi" });
    telegram.userMessage(TOKEN, { chatId: 502, userId: 99, text: "hi" });
    await telegram.waitFor(() => textsTo(501).length === 1 && textsTo(502).length === 1);
    expect(textsTo(501)).toEqual(["You said: hi"]);
    expect(textsTo(502)[0]).toContain("give an operator your user id (99)");
  });

  it("warns at start-up when no allowlist is set", async () => {
    const chat = await startBot({ TELEGRAM_ALLOWED_USERS: "" });
    expect(chat.warnings.join("\n")).toMatch(/telegram:main: no allowlist.*TELEGRAM_ALLOWED_USERS/);
  });

  it("runs two agents side by side, each with its own bot", async () => {
    telegram.addBot("999:OPS-token", "ops_bot");
    const chat = await startBot(
      { TG_TOKEN_OPS: "999:OPS-token" },
      {
        agentsJson: {
          agents: [
            { id: "main", name: "Laoding" },
            { id: "ops", name: "Ops", telegram: { tokenEnv: "TG_TOKEN_OPS", allowedUsers: ["*"] } },
          ],
        },
      },
    );
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "/start" });
    telegram.userMessage("999:OPS-token", { chatId: 501, userId: 77, text: "/start" });
    await telegram.waitFor(() => telegram.sent(TOKEN).length === 1 && telegram.sent("999:OPS-token").length === 1);
    expect(telegram.sent(TOKEN)[0]?.body.text).toContain("I'm Laoding");
    expect(telegram.sent("999:OPS-token")[0]?.body.text).toContain("I'm Ops");
    const sessions = await chat.runtime.store.sql.all("SELECT agent_id AS agentId FROM sessions ORDER BY agent_id");
    expect(sessions).toEqual([{ agentId: "main" }, { agentId: "ops" }]);
  });

  it("webhook mode: registers the URL with its secret, refuses requests without it, answers without holding the request", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/hook`;
    const chat = await startBot({
      TELEGRAM_WEBHOOK_URL: url,
      TELEGRAM_WEBHOOK_SECRET: "s3cret-token-0123456789",
      TELEGRAM_WEBHOOK_PORT: String(port),
    });
    answerEveryMessage(
      chat.bot.fake,
      (userText) => `You said: ${userText}`,
      () => 500,
    );
    await telegram.waitFor((calls) => calls.some((call) => call.method === "setWebhook"));
    expect(telegram.calls.find((call) => call.method === "setWebhook")?.body).toMatchObject({
      url,
      secret_token: "s3cret-token-0123456789",
    });
    expect(telegram.calls.some((call) => call.method === "deleteWebhook")).toBe(false);
    const update = {
      update_id: 1,
      message: {
        message_id: 9,
        date: 0,
        chat: { id: 501, type: "private" },
        from: { id: 77, is_bot: false, first_name: "Ann" },
        text: "by webhook",
      },
    };
    const post = (secret: string) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
        body: JSON.stringify(update),
      });
    expect((await post("wrong-secret")).status).toBe(401);
    expect((await post("s3cret-token-0123456789")).status).toBe(200);
    expect(telegram.sent()).toEqual([]);
    await telegram.waitFor(() => textsTo(501).length === 1);
    expect(textsTo(501)).toEqual(["You said: by webhook"]);
  });

  it("a stop past the grace period cancels the turn in flight (stored, never sent) and a restart answers what was still queued", async () => {
    const chat = await startBot({}, { gateway: { graceMs: 100 } });
    answerEveryMessage(
      chat.bot.fake,
      (userText) => `You said: ${userText}`,
      (userText) => (userText === "slow one" ? 3_000 : 0),
    );
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "slow one" });
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "waiting behind it" });
    await eventually(() =>
      expect(chat.bot.fake.requests.some((request) => request.messages.at(-1)?.content === "slow one")).toBe(true),
    );
    await eventually(async () =>
      expect(await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_inbox")).toEqual({ n: 2 }),
    );
    await chat.restart();
    await telegram.waitFor(() => textsTo(501).length === 1);
    expect(textsTo(501)).toEqual(["You said: waiting behind it"]);
    expect(await chat.runtime.store.sql.all("SELECT status FROM channel_inbox ORDER BY id")).toEqual([
      { status: "cancelled" },
      { status: "answered" },
    ]);
    const answers = await chat.runtime.store.sql.all(
      "SELECT content FROM messages WHERE role = 'assistant' AND kind = 'chat' ORDER BY id",
    );
    expect(answers).toEqual([{ content: "(Cancelled.)" }, { content: "You said: waiting behind it" }]);
  });

  it("keeps showing typing while a turn runs", async () => {
    const chat = await startBot({}, { gateway: { typingRefreshMs: 50 } });
    answerEveryMessage(
      chat.bot.fake,
      () => "finally",
      () => 600,
    );
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "take your time" });
    await telegram.waitFor(() => textsTo(501).length === 1);
    const typing = telegram.calls.filter((call) => call.method === "sendChatAction");
    // Refreshed while the model thought (600 ms at a 50 ms refresh), and all before the answer.
    expect(typing.length).toBeGreaterThanOrEqual(4);
    const replyIndex = telegram.calls.findIndex((call) => call.method === "sendMessage");
    expect(telegram.calls.findIndex((call) => call.method === "sendChatAction")).toBeLessThan(replyIndex);
  });

  it("a crash just after Telegram accepted a part, before it was marked sent, resends it once (at-least-once: Telegram has no idempotency key)", async () => {
    const chat = await startBot();
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "edge" });
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status FROM channel_outbox")).toEqual([{ status: "sent" }]),
    );
    await chat.runtime.store.sql.run("UPDATE channel_outbox SET status = 'pending', sent_at = NULL");
    await chat.restart();
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status FROM channel_outbox")).toEqual([{ status: "sent" }]),
    );
    expect(textsTo(501)).toEqual(["You said: edge", "You said: edge"]);
    // Once acknowledged and marked, never again: the next start sends only the next answer.
    await chat.restart();
    telegram.userMessage(TOKEN, { chatId: 501, userId: 77, text: "after" });
    await telegram.waitFor(() => textsTo(501).length === 3);
    expect(textsTo(501)).toEqual(["You said: edge", "You said: edge", "You said: after"]);
  });
});
