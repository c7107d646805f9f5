/**
 * Feishu end to end: the Lark SDK (Client, WSClient, EventDispatcher) against the
 * loopback fake open platform, the real gateway, store, orchestrator and toolhost, and
 * the fake model.
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
import {
  FAKE_APP_ID,
  FAKE_APP_SECRET,
  FAKE_BOT_OPEN_ID,
  startFakeFeishu,
  type FakeFeishu,
} from "../fakes/feishu-server.js";

let feishu: FakeFeishu;
beforeEach(async () => {
  feishu = await startFakeFeishu();
});
afterEach(async () => {
  await stopChatTestBots();
  await feishu.close();
});

async function startBot(env: Record<string, string> = {}): Promise<ChatTestBot> {
  const chat = await startChatTestBot({
    env: {
      FEISHU_APP_ID: FAKE_APP_ID,
      FEISHU_APP_SECRET: FAKE_APP_SECRET,
      FEISHU_DOMAIN: feishu.domain,
      FEISHU_ALLOWED_USERS: "*",
      OPERATOR_IDS: "feishu:ou_operator",
      ...env,
    },
  });
  answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
  return chat;
}

async function startWebhookBot(extra: Record<string, string> = {}): Promise<{ chat: ChatTestBot; url: string }> {
  const port = await freePort();
  const chat = await startBot({ FEISHU_WEBHOOK_PORT: String(port), FEISHU_VERIFICATION_TOKEN: "verify-me", ...extra });
  return { chat, url: `http://127.0.0.1:${port}/feishu/events` };
}

describe("Feishu over the long connection", () => {
  it("acknowledges at once, answers through the reply API and stores both sides", async () => {
    const chat = await startBot();
    await feishu.longConnection.connected();
    answerEveryMessage(
      chat.bot.fake,
      (userText) => `**Hi**, you said: ${userText}`,
      () => 300,
    );
    const ack = await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "hello", messageId: "om_in_hello" }));
    expect(ack).toEqual({ code: 200 });
    // Acknowledged before the answer existed.
    expect(feishu.sent).toEqual([]);
    await feishu.waitForSent(1);
    expect(feishu.sent[0]).toMatchObject({
      kind: "reply",
      replyTo: "om_in_hello",
      msgType: "post",
      text: "**Hi**, you said: hello",
      replyInThread: false,
      uuid: expect.stringMatching(/^laoding-feishu:main-\d+$/),
    });
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status, platform_message_id AS id FROM channel_outbox")).toEqual([
        { status: "sent", id: "om_sent_1" },
      ]),
    );
    const rows = await chat.runtime.store.sql.all(
      "SELECT m.role, m.content, m.user_id AS userId, s.channel FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.kind = 'chat' ORDER BY m.id",
    );
    expect(rows).toEqual([
      { role: "user", content: "hello", userId: "ou_user1", channel: "feishu" },
      { role: "assistant", content: "**Hi**, you said: hello", userId: null, channel: "feishu" },
    ]);
  });

  it("drops re-deliveries (same event, same message under a new event id), its own messages and stale ones", async () => {
    await startBot();
    await feishu.longConnection.connected();
    const event = feishu.messageEvent({ text: "only once", eventId: "ev_same", messageId: "om_same" });
    await feishu.longConnection.sendEvent(event);
    await feishu.longConnection.sendEvent(event);
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "only once", eventId: "ev_other", messageId: "om_same" }),
    );
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "from myself", senderOpenId: FAKE_BOT_OPEN_ID }));
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "from an hour ago", createTimeMs: Date.now() - 60 * 60 * 1000 }),
    );
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "fresh" }));
    await feishu.waitForSent(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: only once", "You said: fresh"]);
  });

  it("in a group answers only when mentioned, without the placeholder, in the thread of a topic", async () => {
    const chat = await startBot();
    await feishu.longConnection.connected();
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "talking among ourselves", chatType: "group", chatId: "oc_group" }),
    );
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({
        text: "what is new?",
        chatType: "group",
        chatId: "oc_group",
        mentionBot: true,
        threadId: "omt_topic",
        messageId: "om_topic_msg",
      }),
    );
    await feishu.waitForSent(1);
    expect(feishu.sent).toMatchObject([
      { kind: "reply", replyTo: "om_topic_msg", replyInThread: true, text: "You said: what is new?" },
    ]);
    expect(await chat.runtime.store.sql.all("SELECT content FROM messages WHERE role = 'user'")).toEqual([
      { content: "what is new?" },
    ]);
  });

  it("takes commands as plain text and refuses operator commands to non-operators", async () => {
    await startBot();
    await feishu.longConnection.connected();
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "/capability_gaps", senderOpenId: "ou_someone", chatId: "oc_a" }),
    );
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "/capability_gaps", senderOpenId: "ou_operator", chatId: "oc_b" }),
    );
    await feishu.waitForSent(2);
    const byChat = Object.fromEntries(
      feishu.sent.map((message) => [message.text.startsWith("/capability_gaps") ? "a" : "b", message.text]),
    );
    expect(byChat).toMatchObject({
      a: expect.stringMatching(
        /^\/capability_gaps is for operators only\. Your id is feishu:ou_someone; an operator can admit you with: `?laoding operators add feishu:ou_someone --agent [a-z0-9_-]+`?$/,
      ),
      b: "No capability gaps in the last 72 h.",
    });
  });

  it("retries a rate-limited send with back-off", async () => {
    const chat = await startBot();
    await feishu.longConnection.connected();
    feishu.failNext({ status: 400, code: 230020, msg: "This operation triggers the frequency limit" }, 2);
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "busy day" }));
    await feishu.waitForSent(1);
    expect(feishu.sendAttempts).toBe(3);
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status, attempts FROM channel_outbox")).toEqual([
        { status: "sent", attempts: 3 },
      ]),
    );
  });

  it("records a send the platform refuses for good as failed, with the reason", async () => {
    const chat = await startBot();
    await feishu.longConnection.connected();
    feishu.failNext({ status: 400, code: 230002, msg: "The bot can not be outside the group" });
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "hello?" }));
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status, last_error AS reason FROM channel_outbox")).toEqual([
        {
          status: "failed",
          reason:
            "Feishu refused the message: The bot can not be outside the group (code 230002, HTTP 400) (after 1 attempt)",
        },
      ]),
    );
  });

  it("after a crash between the platform's acknowledgement and marking it sent, the resend shows once (uuid)", async () => {
    const chat = await startBot();
    await feishu.longConnection.connected();
    await feishu.longConnection.sendEvent(feishu.messageEvent({ text: "exactly once" }));
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status FROM channel_outbox")).toEqual([{ status: "sent" }]),
    );
    // What a crash just after the send leaves behind: the row still pending.
    await chat.runtime.store.sql.run("UPDATE channel_outbox SET status = 'pending', sent_at = NULL");
    await chat.restart();
    await eventually(async () =>
      expect(await chat.runtime.store.sql.all("SELECT status FROM channel_outbox")).toEqual([{ status: "sent" }]),
    );
    expect(feishu.sendAttempts).toBe(2);
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: exactly once"]);
  });
});

describe("Feishu by webhook", () => {
  it("answers a plain event, acknowledges before the answer, and refuses a wrong verification token", async () => {
    const { chat, url } = await startWebhookBot();
    answerEveryMessage(
      chat.bot.fake,
      (userText) => `You said: ${userText}`,
      () => 300,
    );
    const wrong = await feishu.deliverWebhook(url, feishu.messageEvent({ text: "forged", token: "not-the-token" }));
    expect(wrong.status).toBe(200);
    const response = await feishu.deliverWebhook(url, feishu.messageEvent({ text: "by webhook" }));
    expect(response.status).toBe(200);
    expect(feishu.sent).toEqual([]);
    await feishu.waitForSent(1);
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: by webhook"]);
    expect((await fetch(url.replace("/feishu/events", "/other"), { method: "POST", body: "{}" })).status).toBe(404);
  });

  it("answers the URL challenge and decrypts an encrypted, signed event; a bad signature is dropped", async () => {
    const { url } = await startWebhookBot({ FEISHU_ENCRYPT_KEY: "encrypt-key-123" });
    const challenge = await feishu.deliverWebhook(
      url,
      { challenge: "abc", token: "verify-me", type: "url_verification" },
      "encrypt-key-123",
    );
    expect(JSON.parse(challenge.body)).toEqual({ challenge: "abc" });
    await feishu.deliverWebhook(url, feishu.messageEvent({ text: "wrongly signed" }), "another-key");
    await feishu.deliverWebhook(url, feishu.messageEvent({ text: "secret hello" }), "encrypt-key-123");
    await feishu.waitForSent(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: secret hello"]);
  });
});
