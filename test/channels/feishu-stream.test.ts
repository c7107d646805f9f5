/**
 * Feishu streaming cards on the platform alone: the Lark SDK against the loopback fake
 * open platform, a preview opened and shown as the gateway's reply stream would, then the
 * outbox's final first part delivered with the preview's ref (or the ref interrupted).
 * The fake refuses what Feishu refuses: a sequence not above the card's last, a content
 * update once streaming mode is closed, any operation on a deleted or expired card.
 */
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeliveryError, type ChatPlatform, type PreviewTarget } from "../../src/channels/chat-platform.js";
import { createFeishuPlatform } from "../../src/channels/feishu/feishu-platform.js";
import { FAKE_APP_ID, FAKE_APP_SECRET, startFakeFeishu, type FakeFeishu } from "../fakes/feishu-server.js";

let feishu: FakeFeishu;
beforeEach(async () => {
  feishu = await startFakeFeishu();
});
afterEach(async () => {
  await feishu.close();
});

/** A platform as `laoding start` makes it; `clock` stands for its host's clock. */
function platform(clock: { now: number } = { now: 1_700_000_000_000 }): ChatPlatform {
  return createFeishuPlatform({
    appId: FAKE_APP_ID,
    appSecret: FAKE_APP_SECRET,
    credentialVariables: "FEISHU_APP_ID / FEISHU_APP_SECRET",
    domain: feishu.domain,
    logger: pino({ level: "silent" }),
    now: () => clock.now,
  });
}

/** The user's message the bot answers, known to the fake so the reply lands in its chat. */
function userMessage(options: { chatId?: string; threadId?: string; chatType?: "p2p" | "group" } = {}): PreviewTarget {
  const chatId = options.chatId ?? "oc_chat1";
  const event = feishu.messageEvent({ text: "question", chatId, ...options }) as {
    event: { message: { message_id: string } };
  };
  return {
    chatId,
    chatType: options.chatType === "group" ? "group" : "private",
    replyTo: event.event.message.message_id,
    ...(options.threadId ? { threadId: options.threadId } : {}),
  };
}

const accepted = () => feishu.cardUpdates.filter((update) => update.refused === undefined);
const increasing = (numbers: number[]) => numbers.every((value, index) => index === 0 || value > numbers[index - 1]!);

describe("a Feishu answer streamed into a CardKit card", () => {
  it("creates a streaming card replying to the user, updates it with rising sequences and closes it with the final text", async () => {
    const clock = { now: 1_700_000_000_000 };
    const bot = platform(clock);
    const target = userMessage();
    const surface = bot.openPreview!(target);
    expect(surface).toMatchObject({ keepAliveMs: undefined, minFirstChars: 1, ref: undefined });

    await surface.show("Looking at", "answer");
    expect(surface.ref).toBeDefined();
    clock.now += 1_000;
    await surface.show("🔧 web_search", "status");
    clock.now += 1_000;
    await surface.show("Looking at the logs, the disk", "answer");
    clock.now += 1_000;
    await surface.show("Looking at the logs, the disk is full.\n\n", "answer");

    const final = "Looking at the logs, the disk is full.\n\nFree some space with `du -sh *`.";
    const delivered = await bot.send(
      { chatId: target.chatId, text: final, replyTo: target.replyTo!, editRef: surface.ref! },
      "laoding-feishu:main-1",
    );

    expect(feishu.sent).toHaveLength(1);
    const message = feishu.sent[0]!;
    expect(delivered).toEqual({ messageId: message.messageId });
    expect(message).toMatchObject({
      kind: "reply",
      replyTo: target.replyTo,
      msgType: "interactive",
      replyInThread: false,
    });
    expect(JSON.parse(message.content)).toEqual({ type: "card", data: { card_id: message.cardId } });
    expect(feishu.cardUpdates.map(({ kind, text, streamingMode }) => ({ kind, text, streamingMode }))).toEqual([
      { kind: "content", text: "🔧 web_search", streamingMode: undefined },
      { kind: "content", text: "Looking at the logs, the disk", streamingMode: undefined },
      { kind: "content", text: "Looking at the logs, the disk is full.\n\n", streamingMode: undefined },
      { kind: "content", text: final, streamingMode: undefined },
      { kind: "settings", text: undefined, streamingMode: false },
    ]);
    expect(feishu.cardUpdates.every((update) => update.refused === undefined)).toBe(true);
    expect(increasing(feishu.cardUpdates.map((update) => update.sequence))).toBe(true);
    expect(feishu.chat(target.chatId)).toEqual([
      {
        messageId: message.messageId,
        msgType: "interactive",
        text: final,
        replyTo: target.replyTo,
        replyInThread: false,
        streaming: false,
      },
    ]);
    expect(feishu.card(message.cardId!)?.summary).toBe("Looking at the logs, the disk is full. Free some…");
  });

  it("replies in the thread of a topic group", async () => {
    const bot = platform();
    const target = userMessage({ chatId: "oc_group", chatType: "group", threadId: "omt_topic" });
    const surface = bot.openPreview!(target);
    await surface.show("Partial", "answer");
    await bot.send(
      {
        chatId: "oc_group",
        text: "Partial answer, done.",
        replyTo: target.replyTo!,
        threadId: "omt_topic",
        editRef: surface.ref!,
      },
      "k-1",
    );
    expect(feishu.sent).toMatchObject([
      { kind: "reply", replyTo: target.replyTo, replyInThread: true, msgType: "interactive" },
    ]);
    expect(feishu.chat("oc_group").map((shown) => shown.text)).toEqual(["Partial answer, done."]);
  });

  it("shows a long answer's first part while it streams, as the final first part will be", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    const paragraph = `${"word ".repeat(150).trim()}\n\n`;
    const long = paragraph.repeat(10);
    await surface.show(long, "answer");
    const parts = bot.split(long);
    expect(parts.length).toBeGreaterThan(1);
    expect(feishu.sent[0]!.text).toBe(`${parts[0]!}\n\n…`);
  });

  it("finishes a card after a restart: another process counts its sequence on from the card's creation", async () => {
    const clock = { now: 1_700_000_000_000 };
    const first = platform(clock);
    const target = userMessage();
    const surface = first.openPreview!(target);
    await surface.show("One", "answer");
    // Updates faster than the clock ticks: sequences run ahead of the milliseconds since creation.
    for (const text of ["One two", "One two three", "One two three four"]) await surface.show(text, "answer");
    const ref = surface.ref!;

    clock.now += 5_000;
    const second = platform(clock);
    await second.send({ chatId: target.chatId, text: "One two three four five.", editRef: ref }, "k-2");

    expect(feishu.cardUpdates.every((update) => update.refused === undefined)).toBe(true);
    expect(increasing(feishu.cardUpdates.map((update) => update.sequence))).toBe(true);
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "One two three four five.", streaming: false }]);
  });

  it("jumps ahead once when the process finishing the card has a clock behind the one that streamed it", async () => {
    const streamingHost = { now: 1_700_000_000_000 };
    const first = platform(streamingHost);
    const target = userMessage();
    const surface = first.openPreview!(target);
    await surface.show("Start", "answer");
    streamingHost.now += 30_000;
    await surface.show("Start and more text after half a minute", "answer");

    const laggingHost = { now: streamingHost.now - 20_000 };
    await platform(laggingHost).send(
      { chatId: target.chatId, text: "Start and the end.", editRef: surface.ref! },
      "k-3",
    );

    expect(feishu.cardUpdates.filter((update) => update.refused !== undefined).map((update) => update.refused)).toEqual(
      [300317],
    );
    expect(increasing(accepted().map((update) => update.sequence))).toBe(true);
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "Start and the end.", streaming: false }]);
  });

  it("a retried final update after a lost acknowledgement delivers again without a second message", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("Almost", "answer");
    const part = { chatId: target.chatId, text: "Almost done: done.", replyTo: target.replyTo!, editRef: surface.ref! };
    const first = await bot.send(part, "k-4");
    // The acknowledgement was lost: the outbox sends the same part again. Streaming is closed by now.
    const again = await bot.send(part, "k-4");
    expect(again).toEqual(first);
    expect(feishu.sent).toHaveLength(1);
    expect(feishu.cardUpdates.filter((update) => update.refused !== undefined).map((update) => update.refused)).toEqual(
      [300309],
    );
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "Almost done: done.", streaming: false }]);
  });

  it("goes on with whole-element updates once Feishu closed streaming mode by itself (a turn over 10 minutes)", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("A long", "answer");
    feishu.closeStreaming(feishu.sent[0]!.cardId!);
    await surface.show("A long turn, still going", "answer");
    await bot.send({ chatId: target.chatId, text: "A long turn, finally over.", editRef: surface.ref! }, "k-5");
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "A long turn, finally over.", streaming: false }]);
    expect(accepted().map((update) => update.kind)).toEqual(["element", "element", "settings"]);
  });

  it("pauses on a rate limit (retryable, after Feishu's reset time) and never loses the answer", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("Busy", "answer");
    const rateLimit = {
      status: 400,
      code: 99991400,
      msg: "request trigger frequency limit",
      headers: { "x-ogw-ratelimit-reset": "2" },
    };
    feishu.failNext(rateLimit, 1, "cardkit");
    const refused = await surface.show("Busy busy busy busy busy", "answer").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused).toMatchObject({ retryable: true, retryAfterMs: 2_000 });
    await surface.show("Busy busy busy busy busy busy", "answer");

    feishu.failNext(rateLimit, 1, "cardkit");
    const part = { chatId: target.chatId, text: "Busy, but answered.", editRef: surface.ref! };
    await expect(bot.send(part, "k-6")).rejects.toMatchObject({ retryable: true });
    await bot.send(part, "k-6");
    expect(increasing(accepted().map((update) => update.sequence))).toBe(true);
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "Busy, but answered.", streaming: false }]);
  });

  it("says why Feishu refused a card update, without the app secret", async () => {
    const bot = platform();
    const surface = bot.openPreview!(userMessage());
    await surface.show("Secret", "answer");
    feishu.failNext({ status: 400, code: 10002, msg: `invalid param near ${FAKE_APP_SECRET}` }, 1, "cardkit");
    const refused = (await surface.show("Secret kept", "answer").catch((error: unknown) => error)) as DeliveryError;
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused.retryable).toBe(false);
    expect(refused.message).toMatch(/^Feishu refused the card update: invalid param near .+ \(code 10002, HTTP 400\)$/);
    expect(refused.message).not.toContain(FAKE_APP_SECRET);
  });

  it("sends the answer as a new message when the card can no longer be updated", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("Half an", "answer");
    feishu.breakCard(feishu.sent[0]!.cardId!, "expired");
    const delivered = await bot.send(
      {
        chatId: target.chatId,
        text: "Half an answer, then all of it.",
        replyTo: target.replyTo!,
        editRef: surface.ref!,
      },
      "laoding-feishu:main-7",
    );
    expect(feishu.sent).toHaveLength(2);
    expect(feishu.sent[1]).toMatchObject({ msgType: "post", replyTo: target.replyTo, uuid: "laoding-feishu:main-7" });
    expect(delivered).toEqual({ messageId: feishu.sent[1]!.messageId });
    expect(feishu.chat(target.chatId).map((shown) => shown.text)).toEqual([
      "Half an",
      "Half an answer, then all of it.",
    ]);
  });

  it("a ref it cannot read (another platform's, a damaged row) gets a new message", async () => {
    const bot = platform();
    const target = userMessage();
    await bot.send({ chatId: target.chatId, text: "Fresh.", editRef: '{"chatId":1}' }, "k-8");
    expect(feishu.chat(target.chatId)).toMatchObject([{ msgType: "post", text: "Fresh." }]);
  });

  it("marks an interrupted preview with the note and closes it; a card that is gone says so", async () => {
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("Cut", "answer");
    await platform().interruptPreview!(surface.ref!, "⚠️ This answer was cut off.");
    expect(feishu.chat(target.chatId)).toMatchObject([{ text: "⚠️ This answer was cut off.", streaming: false }]);

    const other = bot.openPreview!(userMessage());
    await other.show("Gone", "answer");
    feishu.breakCard(feishu.sent[1]!.cardId!, "deleted");
    await expect(bot.interruptPreview!(other.ref!, "note")).rejects.toMatchObject({ retryable: false });
  });
});

describe("a Feishu answer streamed where CardKit is refused", () => {
  it.each(["scope", "absent"] as const)(
    "patches a shared card message instead (CardKit %s), and does not ask CardKit again",
    async (how) => {
      feishu.refuseCardKit(how);
      const bot = platform();
      const target = userMessage();
      const surface = bot.openPreview!(target);
      await surface.show("Patch", "answer");
      await surface.show("Patch me up", "answer");
      const delivered = await bot.send(
        { chatId: target.chatId, text: "Patched to the end.", editRef: surface.ref! },
        "k-9",
      );

      expect(feishu.sent).toHaveLength(1);
      expect(feishu.sent[0]).toMatchObject({ msgType: "interactive", kind: "reply" });
      expect(feishu.sent[0]!.cardId).toBeUndefined();
      expect(JSON.parse(feishu.sent[0]!.content)).toMatchObject({ config: { update_multi: true } });
      expect(delivered).toEqual({ messageId: feishu.sent[0]!.messageId });
      expect(feishu.patches.map((patch) => patch.text)).toEqual(["Patch me up", "Patched to the end."]);
      expect(feishu.chat(target.chatId)).toMatchObject([{ text: "Patched to the end." }]);

      const second = bot.openPreview!(userMessage());
      feishu.refuseCardKit(false);
      await second.show("Again", "answer");
      expect(feishu.sent[1]!.cardId).toBeUndefined();
    },
  );

  it("sends a new message when the patched card was recalled", async () => {
    feishu.refuseCardKit();
    const bot = platform();
    const target = userMessage();
    const surface = bot.openPreview!(target);
    await surface.show("Soon recalled", "answer");
    feishu.recallMessage(feishu.sent[0]!.messageId);
    await bot.send({ chatId: target.chatId, text: "Still answered.", editRef: surface.ref! }, "k-10");
    expect(feishu.patches.map((patch) => patch.refused)).toEqual([230011]);
    expect(feishu.chat(target.chatId)).toMatchObject([{ msgType: "post", text: "Still answered." }]);
  });
});
