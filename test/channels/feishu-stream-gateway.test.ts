/**
 * Streamed replies on Feishu end to end: the real chat gateway on a real SQLite store,
 * the Lark SDK over the long connection to the loopback fake open platform, and a
 * scripted turn that writes its answer over time (control.onAnswer), so no model is
 * needed. The answer grows in a CardKit card, never faster than the interval, every card
 * operation with a higher sequence; the outbox's first part closes the card with the
 * stored answer. Times are only ever asserted as lower bounds.
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/channels/access-policy.js";
import type { IncomingMessage, MessageHandler, TurnControl } from "../../src/channels/channel.js";
import { createChatGateway, type ChatStreaming } from "../../src/channels/chat-gateway.js";
import { createFeishuPlatform } from "../../src/channels/feishu/feishu-platform.js";
import { createLeaseKeeper } from "../../src/replica/lease-keeper.js";
import { systemClock } from "../../src/store/clock.js";
import { StoreError } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { FAKE_APP_ID, FAKE_APP_SECRET, startFakeFeishu, type FakeFeishu } from "../fakes/feishu-server.js";
import { eventually } from "../helpers/chat-bot.js";
import { tempDir } from "../helpers/temp-dir.js";

const INTERVAL_MS = 150;
const INTERRUPTED = "(Interrupted: the answer follows in a new message.)";

const streaming: ChatStreaming = {
  channels: new Set(["feishu"]),
  intervalMs: INTERVAL_MS,
  statusText: (tool) => `Running ${tool}…`,
  interruptedText: INTERRUPTED,
};

let feishu: FakeFeishu;
const running: { stop(): Promise<void> }[] = [];

beforeEach(async () => {
  feishu = await startFakeFeishu();
});
afterEach(async () => {
  for (const gateway of running.splice(0).reverse()) await gateway.stop();
  await feishu.close();
});

type Gateway = {
  store: Store;
  controls: TurnControl[];
  messages: IncomingMessage[];
  stop(): Promise<void>;
  /** Dies: stops receiving and holding its leases, with its turn still running. */
  crash(): Promise<void>;
};

async function startGateway(
  handler: MessageHandler,
  options: { database?: string; holder?: string; streaming?: ChatStreaming | undefined } = {},
): Promise<Gateway> {
  const logger = pino({ level: process.env.CHAT_TEST_LOG ?? "silent" });
  const store = await openStore(options.database ?? join(tempDir(), "laoding.db"), systemClock);
  const keeper = createLeaseKeeper({ leases: store.leases, holder: options.holder ?? "a", ttlMs: 3_000, logger });
  const platform = createFeishuPlatform({
    appId: FAKE_APP_ID,
    appSecret: FAKE_APP_SECRET,
    credentialVariables: "FEISHU_APP_ID / FEISHU_APP_SECRET",
    domain: feishu.domain,
    logger,
  });
  const identity = await platform.login();
  const controls: TurnControl[] = [];
  const messages: IncomingMessage[] = [];
  const gateway = createChatGateway({
    bots: [
      {
        key: "feishu:main",
        agentId: "main",
        platform,
        access: createAccessPolicy({ operators: [], groupPolicy: "mention" }),
        identity,
      },
    ],
    store: store.channels,
    work: store.chatWork,
    keeper,
    transaction: (work) => store.transaction(work),
    logger,
    refusal: () => "no",
    messageCap: { maxChars: 50_000, reply: () => "too long" },
    graceMs: 2_000,
    delivery: { retryBaseMs: 20, retryMaxMs: 200 },
    streaming: "streaming" in options ? options.streaming : streaming,
  });
  const done = gateway.run((message, control) => {
    messages.push(message);
    if (control) controls.push(control);
    return handler(message, control);
  });
  done.catch(() => undefined);
  await feishu.longConnection.connected();
  let closed = false;
  const entry: Gateway = {
    store,
    controls,
    messages,
    async stop() {
      if (closed) return;
      closed = true;
      await gateway.stop();
      await done;
      await keeper.stop();
      await store.close();
    },
    async crash() {
      closed = true;
      await platform.stop();
      await keeper.stop();
    },
  };
  running.push(entry);
  return entry;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A turn that writes `answer` in steps of `step` characters every `everyMs`, then returns it. */
function writes(answer: string, options: { step?: number; everyMs?: number; tool?: string } = {}): MessageHandler {
  return async (_message, control) => {
    if (options.tool) {
      control?.onProgress?.({ state: "tool", tool: options.tool });
      await sleep(options.everyMs ?? 40);
    }
    const step = options.step ?? 25;
    for (let end = step; end < answer.length; end += step) {
      control?.onAnswer?.(answer.slice(0, end));
      await sleep(options.everyMs ?? 40);
    }
    control?.onAnswer?.(answer);
    return answer;
  };
}

const ANSWER = [
  "Here is what I found about **streaming** replies.",
  "",
  "1. The answer grows in the chat while the model writes it, one update at a time.",
  "2. Feishu types each update out in the card.",
  "3. The final text closes the card, in the same message.",
  "",
  "That is all for now.",
].join("\n");

const outbox = (store: Store) =>
  store.sql.all<{ part: number; text: string; editRef: string | null; status: string }>(
    "SELECT part, text, edit_ref AS editRef, status FROM channel_outbox ORDER BY id",
  );
const streamRows = (store: Store) => store.sql.all("SELECT inbox_id AS inboxId, ref FROM channel_streams");
const increasing = (numbers: number[]) => numbers.every((value, index) => index === 0 || value > numbers[index - 1]!);

function ask(text: string, options: { chatId?: string; threadId?: string; messageId?: string } = {}) {
  const group = options.chatId !== undefined && options.chatId !== "oc_chat1";
  const event = feishu.messageEvent({
    text,
    ...options,
    ...(group ? { chatType: "group" as const, mentionBot: true } : {}),
  });
  void feishu.longConnection.sendEvent(event);
  return event;
}

describe("Feishu streaming through the gateway", () => {
  it("a private chat: the card grows in paced steps with rising sequences and closes with the stored answer", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 12, everyMs: 30, tool: "web_search" }));
    ask("tell me about streaming", { messageId: "om_question" });
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));

    expect(feishu.sent).toHaveLength(1);
    const [message] = feishu.sent;
    expect(message).toMatchObject({
      kind: "reply",
      replyTo: "om_question",
      msgType: "interactive",
      replyInThread: false,
    });
    const card = feishu.card(message!.cardId!)!;
    // The card was created with the tool's status line, then the answer grew in it.
    const updates = feishu.cardUpdates;
    expect(updates.every((update) => update.refused === undefined)).toBe(true);
    expect(increasing(updates.map((update) => update.sequence))).toBe(true);
    const previews = updates.slice(0, -2);
    expect(previews.map((update) => update.kind)).toEqual(previews.map(() => "content"));
    expect(
      previews.map((update) => update.text).filter((text) => text !== "Running web_search…").length,
    ).toBeGreaterThanOrEqual(3);
    const shownAt = [card.createdAt, ...previews.map((update) => update.at)];
    for (let index = 1; index < shownAt.length; index += 1)
      expect(shownAt[index]! - shownAt[index - 1]!).toBeGreaterThanOrEqual(INTERVAL_MS);
    expect(updates.slice(-2)).toMatchObject([
      { kind: "content", text: ANSWER },
      { kind: "settings", streamingMode: false },
    ]);

    const [stored] = await outbox(gateway.store);
    expect(stored).toMatchObject({ part: 1, text: ANSWER });
    expect(JSON.parse(stored!.editRef!)).toMatchObject({ k: "card", c: message!.cardId, m: message!.messageId });
    expect(feishu.chat("oc_chat1")).toEqual([
      expect.objectContaining({ messageId: message!.messageId, text: ANSWER, streaming: false }),
    ]);
    expect(await streamRows(gateway.store)).toEqual([]);
  });

  it("a topic group: the card replies in the thread", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 30, everyMs: 30 }));
    ask("what is new?", { chatId: "oc_group", threadId: "omt_topic", messageId: "om_topic_msg" });
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));
    expect(feishu.sent).toMatchObject([
      { kind: "reply", replyTo: "om_topic_msg", replyInThread: true, msgType: "interactive" },
    ]);
    expect(feishu.chat("oc_group")).toEqual([expect.objectContaining({ text: ANSWER, streaming: false })]);
  });

  it("an answer over 4000 characters: the card shows part 1, the other parts are new messages", async () => {
    const long = `${"A paragraph of the long answer, repeated.\n\n".repeat(150)}The end.`;
    const gateway = await startGateway(writes(long, { step: 1_500, everyMs: 30 }));
    ask("a long one");
    await eventually(async () => {
      const statuses = (await outbox(gateway.store)).map((row) => row.status);
      expect(statuses.length).toBeGreaterThan(1);
      expect(statuses.every((status) => status === "sent")).toBe(true);
    });
    const rows = await outbox(gateway.store);
    expect(rows.length).toBeGreaterThan(1);
    const shown = feishu.chat("oc_chat1");
    expect(shown.map((entry) => entry.text)).toEqual(rows.map((row) => row.text));
    expect(shown.map((entry) => entry.msgType)).toEqual(["interactive", ...rows.slice(1).map(() => "post")]);
  });

  it("where CardKit is refused, the preview is a card patched in place, closed with the stored answer", async () => {
    feishu.refuseCardKit();
    const gateway = await startGateway(writes(ANSWER, { step: 12, everyMs: 30 }));
    ask("patch it");
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));
    expect(feishu.sent).toHaveLength(1);
    expect(feishu.patches.length).toBeGreaterThanOrEqual(3);
    expect(feishu.patches.at(-1)?.text).toBe(ANSWER);
    for (let index = 1; index < feishu.patches.length - 1; index += 1)
      expect(feishu.patches[index]!.at - feishu.patches[index - 1]!.at).toBeGreaterThanOrEqual(INTERVAL_MS);
    expect(feishu.chat("oc_chat1")).toEqual([expect.objectContaining({ msgType: "interactive", text: ANSWER })]);
  });

  it("a run that dies mid-stream: the next run marks its card interrupted and sends the answer as a new message", async () => {
    const database = join(tempDir(), "laoding.db");
    let freeze: (error: Error) => void = () => undefined;
    const first = await startGateway(
      async (_message, control) => {
        control?.onAnswer?.("The beginning of an answer that will never be finished");
        await sleep(INTERVAL_MS + 50);
        control?.onAnswer?.("The beginning of an answer that will never be finished, because the run dies");
        return new Promise<string>((_resolve, reject) => (freeze = reject));
      },
      { database, holder: "a" },
    );
    ask("question");
    await eventually(() => expect(feishu.cardUpdates).toHaveLength(1));
    await eventually(async () => expect(await streamRows(first.store)).toHaveLength(1));
    const abandoned = feishu.sent[0]!;
    await first.crash();

    const second = await startGateway(writes(ANSWER, { step: 20, everyMs: 30 }), { database, holder: "b" });
    await eventually(async () => expect((await outbox(second.store))[0]?.status).toBe("sent"));
    expect(second.messages[0]?.resumed).toBe(true);
    const shown = feishu.chat("oc_chat1");
    expect(shown[0]).toMatchObject({ messageId: abandoned.messageId, text: INTERRUPTED, streaming: false });
    expect(shown.at(-1)).toMatchObject({ text: ANSWER });
    expect(feishu.cardUpdates.every((update) => update.refused === undefined)).toBe(true);
    expect(await streamRows(second.store)).toEqual([]);
    freeze(new StoreError("the process is gone"));
  });

  it("a duplicate event never starts a second stream", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 20, everyMs: 40 }));
    const event = ask("once", { messageId: "om_once" });
    await eventually(() => expect(feishu.sent).toHaveLength(1));
    await feishu.longConnection.sendEvent(event);
    await feishu.longConnection.sendEvent(
      feishu.messageEvent({ text: "once", eventId: "ev_again", messageId: "om_once" }),
    );
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));
    await sleep(300);
    expect(gateway.messages).toHaveLength(1);
    expect(feishu.sent).toHaveLength(1);
    expect(feishu.chat("oc_chat1")).toEqual([expect.objectContaining({ text: ANSWER, streaming: false })]);
  });

  it("with streaming off for Feishu, answers as before: one post, no card", async () => {
    const gateway = await startGateway(writes(ANSWER), { streaming: { ...streaming, channels: new Set() } });
    ask("plain please");
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));
    expect(feishu.cardUpdates).toEqual([]);
    expect(feishu.chat("oc_chat1")).toEqual([expect.objectContaining({ msgType: "post", text: ANSWER })]);
    expect(gateway.controls.map((control) => control.onAnswer)).toEqual([undefined]);
  });
});
