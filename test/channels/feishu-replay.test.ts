/**
 * Issue 32 item 9, the Feishu webhook's replay guard: a correctly signed event whose
 * X-Lark-Request-Timestamp is more than 5 minutes off (a captured request sent again) is
 * refused with 401 before the SDK sees it; the same event freshly stamped is answered. The
 * Lark SDK's dispatcher behind the real webhook server, the loopback fake Feishu signing
 * with the encrypt key, the real gateway, store and orchestrator, and the fake model.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerEveryMessage, freePort, startChatTestBot, stopChatTestBots } from "../helpers/chat-bot.js";
import { FAKE_APP_ID, FAKE_APP_SECRET, startFakeFeishu, type FakeFeishu } from "../fakes/feishu-server.js";

const ENCRYPT_KEY = "encrypt-key-123";
const MINUTE = 60_000;

let feishu: FakeFeishu;
beforeEach(async () => {
  feishu = await startFakeFeishu();
});
afterEach(async () => {
  await stopChatTestBots();
  await feishu.close();
});

async function startWebhookBot() {
  const port = await freePort();
  const chat = await startChatTestBot({
    env: {
      FEISHU_APP_ID: FAKE_APP_ID,
      FEISHU_APP_SECRET: FAKE_APP_SECRET,
      FEISHU_DOMAIN: feishu.domain,
      FEISHU_ALLOWED_USERS: "*",
      FEISHU_WEBHOOK_PORT: String(port),
      FEISHU_VERIFICATION_TOKEN: "verify-me",
      FEISHU_ENCRYPT_KEY: ENCRYPT_KEY,
    },
  });
  answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
  return { chat, url: `http://127.0.0.1:${port}/feishu/events` };
}

describe("Feishu webhook: timestamps more than 5 minutes off", () => {
  it("a signed event stamped 6 minutes ago is refused with 401; the same event stamped now is answered once", async () => {
    const { url } = await startWebhookBot();
    const event = feishu.messageEvent({ text: "replayed hello", eventId: "ev_replay", messageId: "om_replay" });
    const replay = await feishu.deliverWebhook(url, event, ENCRYPT_KEY, { timestampMs: Date.now() - 6 * MINUTE });
    expect(replay.status).toBe(401);
    expect(replay.body).toMatch(
      /X-Lark-Request-Timestamp is \d+ s old; a request more than 300 s away from the bot's clock is refused as a replay/,
    );
    const fresh = await feishu.deliverWebhook(url, event, ENCRYPT_KEY);
    expect(fresh.status).toBe(200);
    await feishu.waitForSent(1);
    // The refused request was never taken in (else the fresh one would be a dropped duplicate): one reply, to the fresh one.
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: replayed hello"]);
  });

  it("a stamp 6 minutes in the future is refused; one 4 minutes old is still answered", async () => {
    const { url } = await startWebhookBot();
    const future = await feishu.deliverWebhook(url, feishu.messageEvent({ text: "from the future" }), ENCRYPT_KEY, {
      timestampMs: Date.now() + 6 * MINUTE,
    });
    expect(future.status).toBe(401);
    expect(future.body).toMatch(/s in the future/);
    const late = await feishu.deliverWebhook(url, feishu.messageEvent({ text: "a little late" }), ENCRYPT_KEY, {
      timestampMs: Date.now() - 4 * MINUTE,
    });
    expect(late.status).toBe(200);
    await feishu.waitForSent(1);
    expect(feishu.sent.map((message) => message.text)).toEqual(["You said: a little late"]);
  });
});
