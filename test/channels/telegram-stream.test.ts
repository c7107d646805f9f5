/**
 * Streamed replies on Telegram end to end: the real chat gateway on a real SQLite store,
 * grammY against the loopback fake Bot API, and a scripted turn that writes its answer
 * over time (control.onAnswer), so no model is needed. Private chats preview in drafts
 * and get the answer as a new message; groups (and bots whose server refuses drafts)
 * preview in one message edited in place, never faster than the interval, and its final
 * text is the stored answer, rendered. Times are only ever asserted as lower bounds.
 */
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAccessPolicy } from "../../src/channels/access-policy.js";
import type { IncomingMessage, MessageHandler, TurnControl } from "../../src/channels/channel.js";
import { createChatGateway, type ChatStreaming } from "../../src/channels/chat-gateway.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/markdown-to-html.js";
import { createTelegramPlatform } from "../../src/channels/telegram/telegram-platform.js";
import { createLeaseKeeper } from "../../src/replica/lease-keeper.js";
import { systemClock } from "../../src/store/clock.js";
import { StoreError } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { startFakeTelegram, type FakeTelegram, type TelegramCall } from "../fakes/telegram-server.js";
import { eventually } from "../helpers/chat-bot.js";
import { tempDir } from "../helpers/temp-dir.js";

const TOKEN = "123456:STREAM-token";
const BOT_KEY = "telegram:main";
const INTERVAL_MS = 150;
const GROUP = -900;
const PRIVATE = 501;
const INTERRUPTED = "(Interrupted: the answer follows in a new message.)";

const streaming = (overrides: Partial<ChatStreaming> = {}): ChatStreaming => ({
  channels: new Set(["telegram"]),
  intervalMs: INTERVAL_MS,
  statusText: (tool) => `Running ${tool}…`,
  interruptedText: INTERRUPTED,
  ...overrides,
});

let telegram: FakeTelegram;
const running: { stop(): Promise<void> }[] = [];

beforeEach(async () => {
  telegram = await startFakeTelegram();
  telegram.addBot(TOKEN, "laoding_bot");
});
afterEach(async () => {
  for (const gateway of running.splice(0).reverse()) await gateway.stop();
  await telegram.close();
});

type Gateway = {
  store: Store;
  /** The control each turn was given, in order. */
  controls: TurnControl[];
  messages: IncomingMessage[];
  /** Stops receiving and answering as a stop does. */
  stop(): Promise<void>;
  /** Dies: stops receiving and holding its leases, with its turn still running (as a killed process would leave it). */
  crash(): Promise<void>;
};

async function startGateway(
  handler: MessageHandler,
  options: {
    database?: string;
    holder?: string;
    streaming?: ChatStreaming | undefined;
    telegram?: FakeTelegram;
    graceMs?: number;
  } = {},
): Promise<Gateway> {
  const logger = pino({ level: process.env.CHAT_TEST_LOG ?? "silent" });
  const store = await openStore(options.database ?? join(tempDir(), "laoding.db"), systemClock);
  const keeper = createLeaseKeeper({ leases: store.leases, holder: options.holder ?? "a", ttlMs: 3_000, logger });
  const platform = createTelegramPlatform({
    token: TOKEN,
    tokenVariable: "TELEGRAM_BOT_TOKEN",
    apiRoot: (options.telegram ?? telegram).apiRoot,
    commands: [],
    logger,
  });
  const identity = await platform.login();
  const controls: TurnControl[] = [];
  const messages: IncomingMessage[] = [];
  const gateway = createChatGateway({
    bots: [
      {
        key: BOT_KEY,
        agentId: "main",
        platform,
        access: createAccessPolicy({ operators: [], groupPolicy: "all" }),
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
    graceMs: options.graceMs ?? 2_000,
    delivery: { retryBaseMs: 20, retryMaxMs: 200 },
    streaming: "streaming" in options ? options.streaming : streaming(),
  });
  const done = gateway.run((message, control) => {
    messages.push(message);
    if (control) controls.push(control);
    return handler(message, control);
  });
  done.catch(() => undefined);
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
  "1. The answer grows in the chat while the model writes it, one edit at a time.",
  "2. Telegram limits how often a message may be edited, so edits are paced.",
  "3. The final text replaces the preview, rendered from Markdown.",
  "",
  "That is all for now.",
].join("\n");

const callsTo = (chatId: number, method?: string): TelegramCall[] =>
  telegram.calls.filter(
    (call) => Number(call.body.chat_id) === chatId && (method === undefined || call.method === method),
  );
/** The preview's own calls in edit mode: the plain first message and its plain edits (the final edit is HTML). */
const previewCalls = (chatId: number): TelegramCall[] =>
  callsTo(chatId).filter(
    (call) => (call.method === "sendMessage" || call.method === "editMessageText") && call.body.parse_mode !== "HTML",
  );
const outbox = (store: Store) =>
  store.sql.all<{ part: number; text: string; editRef: string | null; status: string }>(
    "SELECT part, text, edit_ref AS editRef, status FROM channel_outbox ORDER BY id",
  );
const streamRows = (store: Store) => store.sql.all("SELECT inbox_id AS inboxId, ref FROM channel_streams");

function expectPaced(calls: TelegramCall[]): void {
  for (let index = 1; index < calls.length; index += 1)
    expect((calls[index]?.at ?? 0) - (calls[index - 1]?.at ?? 0)).toBeGreaterThanOrEqual(INTERVAL_MS);
}

describe("Telegram streaming", () => {
  it("private chat: drafts while the turn writes (the placeholder while a tool runs), then the answer as a new message equal to the stored one", async () => {
    const gateway = await startGateway(writes(ANSWER, { tool: "web_search", step: 15, everyMs: 50 }));
    telegram.userMessage(TOKEN, { chatId: PRIVATE, userId: 77, text: "tell me about streaming" });
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));

    const drafts = callsTo(PRIVATE, "sendMessageDraft");
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    // One draft per turn, animated: the same non-zero id every time.
    const draftIds = new Set(drafts.map((call) => call.body.draft_id));
    expect(draftIds.size).toBe(1);
    expect(Number([...draftIds][0])).toBeGreaterThan(0);
    // While the tool ran: Telegram's own "Thinking…" placeholder (an empty draft).
    expect(drafts[0]?.body.text).toBe("");
    const texts = drafts.slice(1).map((call) => String(call.body.text));
    for (const [index, text] of texts.entries()) {
      expect(ANSWER.startsWith(text)).toBe(true);
      if (index > 0) expect(text.length).toBeGreaterThan(texts[index - 1]?.length ?? 0);
    }
    expect(drafts.every((call) => call.body.parse_mode === undefined)).toBe(true);
    expectPaced(drafts.slice(1));

    const [stored] = await outbox(gateway.store);
    expect(stored).toMatchObject({ part: 1, text: ANSWER, editRef: null });
    expect(callsTo(PRIVATE, "editMessageText")).toEqual([]);
    expect(telegram.shows(PRIVATE)).toEqual([
      expect.objectContaining({ text: markdownToTelegramHtml(ANSWER), parseMode: "HTML", edits: 0 }),
    ]);
    // The final message comes after every draft.
    const finalAt = callsTo(PRIVATE, "sendMessage")[0]?.at ?? 0;
    expect(drafts.every((call) => call.at <= finalAt)).toBe(true);
    expect(await streamRows(gateway.store)).toEqual([]);
    expect(gateway.messages).toHaveLength(1);
  });

  it("group: one message edited in place, never faster than the interval, ending as the stored answer rendered", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 12, everyMs: 50 }));
    const update = telegram.userMessage(TOKEN, {
      chatId: GROUP,
      userId: 77,
      text: "tell me about streaming",
      chatType: "supergroup",
    });
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));

    expect(callsTo(GROUP, "sendMessageDraft")).toEqual([]);
    const preview = previewCalls(GROUP);
    const [first, ...edits] = preview;
    // The first preview is a plain message quoting the question, as the answer would.
    expect(first?.method).toBe("sendMessage");
    expect(first?.body.reply_parameters).toMatchObject({ message_id: update.message?.message_id });
    expect(String(first?.body.text).length).toBeGreaterThanOrEqual(24);
    // The answer grew in at least three visible steps before the final text.
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits.every((call) => call.method === "editMessageText")).toBe(true);
    expectPaced(preview);

    const [stored] = await outbox(gateway.store);
    const [shown] = telegram.shows(GROUP);
    expect(telegram.shows(GROUP)).toHaveLength(1);
    expect(stored).toMatchObject({ part: 1, text: ANSWER, editRef: `${GROUP}:${shown?.messageId}` });
    expect(shown).toMatchObject({ text: markdownToTelegramHtml(ANSWER), parseMode: "HTML" });
    expect(await streamRows(gateway.store)).toEqual([]);
  });

  it("a 429 during the edits slows them down and never loses the answer", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 8, everyMs: 40 }));
    telegram.failNext("editMessageText", {
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      parameters: { retry_after: 1 },
    });
    telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "go", chatType: "supergroup" });
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));

    const edits = callsTo(GROUP, "editMessageText");
    // The refused edit, then nothing for the second Telegram asked for.
    const refusedAt = edits[0]?.at ?? 0;
    expect((edits[1]?.at ?? 0) - refusedAt).toBeGreaterThanOrEqual(950);
    expectPaced(previewCalls(GROUP));
    expect(telegram.shows(GROUP)).toEqual([
      expect.objectContaining({ text: markdownToTelegramHtml(ANSWER), parseMode: "HTML" }),
    ]);
  });

  it("where drafts are refused (an older Bot API server), previews in a message edited in place, and remembers it", async () => {
    const older = await startFakeTelegram({ refuseDrafts: true });
    older.addBot(TOKEN, "laoding_bot");
    try {
      await startGateway(writes(ANSWER, { step: 10, everyMs: 50 }), { telegram: older });
      older.userMessage(TOKEN, { chatId: PRIVATE, userId: 77, text: "first" });
      await older.waitFor(() => older.shows(PRIVATE).some((message) => message.parseMode === "HTML"));
      older.userMessage(TOKEN, { chatId: PRIVATE, userId: 77, text: "second" });
      await older.waitFor(() => older.shows(PRIVATE).filter((message) => message.parseMode === "HTML").length === 2);
      // One refused draft: the bot does not ask again.
      expect(older.calls.filter((call) => call.method === "sendMessageDraft")).toHaveLength(1);
      const shows = older.shows(PRIVATE);
      expect(shows.map((message) => message.text)).toEqual([
        markdownToTelegramHtml(ANSWER),
        markdownToTelegramHtml(ANSWER),
      ]);
      expect(shows.every((message) => message.edits >= 2)).toBe(true);
    } finally {
      for (const gateway of running.splice(0).reverse()) await gateway.stop();
      await older.close();
    }
  });

  it("an answer over 4096 characters: the preview shows its beginning, part 1 edits it, the other parts are new messages", async () => {
    const paragraphs = Array.from({ length: 12 }, (_, index) => `Paragraph ${index}: ${"word ".repeat(150).trim()}`);
    const long = paragraphs.join("\n\n");
    const gateway = await startGateway(writes(long, { step: 400, everyMs: 30 }));
    telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "tell me a lot", chatType: "supergroup" });
    await eventually(async () => {
      const rows = await outbox(gateway.store);
      expect(rows.length).toBeGreaterThan(1);
      expect(rows.every((row) => row.status === "sent")).toBe(true);
    });
    const preview = previewCalls(GROUP);
    for (const call of preview) expect(String(call.body.text).length).toBeLessThanOrEqual(4096);
    expect(preview.some((call) => String(call.body.text).endsWith("…"))).toBe(true);
    const rows = await outbox(gateway.store);
    const shows = telegram.shows(GROUP);
    expect(shows.map((message) => message.text)).toEqual(rows.map((row) => markdownToTelegramHtml(row.text)));
    expect(rows.map((row) => row.editRef)).toEqual([
      `${GROUP}:${shows[0]?.messageId}`,
      ...rows.slice(1).map(() => null),
    ]);
    expect(rows.map((row) => row.text).join("\n\n")).toBe(long);
  });

  it("a run that dies mid-stream leaves its preview stored; the next run marks it interrupted and sends the answer as a new message", async () => {
    const database = join(tempDir(), "laoding.db");
    let freeze: (error: Error) => void = () => undefined;
    const first = await startGateway(
      async (_message, control) => {
        control?.onAnswer?.("The beginning of an answer that will never be finished");
        await sleep(INTERVAL_MS + 50);
        control?.onAnswer?.("The beginning of an answer that will never be finished, because the run dies");
        // The process is gone: nothing more happens in this turn.
        return new Promise<string>((_resolve, reject) => (freeze = reject));
      },
      { database, holder: "a" },
    );
    telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "question", chatType: "supergroup" });
    await telegram.waitFor(() => callsTo(GROUP, "editMessageText").length === 1);
    await eventually(async () => expect(await streamRows(first.store)).toHaveLength(1));
    const [abandoned] = telegram.shows(GROUP);
    await first.crash();

    const second = await startGateway(writes(ANSWER, { step: 20, everyMs: 30 }), { database, holder: "b" });
    await eventually(async () => expect((await outbox(second.store))[0]?.status).toBe("sent"));
    expect(second.messages[0]?.resumed).toBe(true);
    const shows = telegram.shows(GROUP);
    expect(shows).toHaveLength(2);
    expect(shows[0]).toMatchObject({ messageId: abandoned?.messageId, text: INTERRUPTED });
    expect(shows[1]).toMatchObject({ text: markdownToTelegramHtml(ANSWER), parseMode: "HTML" });
    const [stored] = await outbox(second.store);
    expect(stored).toMatchObject({ text: ANSWER, editRef: `${GROUP}:${shows[1]?.messageId}` });
    expect(await streamRows(second.store)).toEqual([]);
    // The dead run's turn ends as a store failure would (it never writes again).
    freeze(new StoreError("the process is gone"));
  });

  it("a turn cancelled by a stop leaves its preview; the next start marks it interrupted", async () => {
    const database = join(tempDir(), "laoding.db");
    await startGateway(
      async (_message, control) => {
        control?.onAnswer?.("A long answer that the stop will cut short");
        await new Promise((resolve) => control?.signal?.addEventListener("abort", resolve, { once: true }));
        return "(Cancelled.)";
      },
      { database, graceMs: 100 },
    );
    telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "question", chatType: "supergroup" });
    await telegram.waitFor(() => callsTo(GROUP, "sendMessage").length === 1);
    const [first] = running.splice(0);
    await eventually(async () => expect(await streamRows((first as Gateway).store)).toHaveLength(1));
    await first?.stop();
    expect(telegram.shows(GROUP)).toEqual([
      expect.objectContaining({ text: "A long answer that the stop will cut short" }),
    ]);

    const next = await startGateway(writes("unused"), { database });
    await telegram.waitFor(() => callsTo(GROUP, "editMessageText").length === 1);
    expect(telegram.shows(GROUP)).toEqual([expect.objectContaining({ text: INTERRUPTED })]);
    await eventually(async () => expect(await streamRows(next.store)).toEqual([]));
  });

  it("a duplicate update never starts a second stream", async () => {
    const gateway = await startGateway(writes(ANSWER, { step: 20, everyMs: 40 }));
    const update = telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "once", chatType: "supergroup" });
    await telegram.waitFor(() => callsTo(GROUP, "sendMessage").length === 1);
    telegram.pushUpdate(TOKEN, update);
    telegram.pushUpdate(TOKEN, update);
    await eventually(async () => expect((await outbox(gateway.store))[0]?.status).toBe("sent"));
    await sleep(300);
    expect(gateway.messages).toHaveLength(1);
    expect(callsTo(GROUP, "sendMessage")).toHaveLength(1);
    expect(telegram.shows(GROUP)).toEqual([expect.objectContaining({ text: markdownToTelegramHtml(ANSWER) })]);
  });

  it("without streaming, behaves as before: no previews, the answer sent once, no stream control in the turn", async () => {
    const gateway = await startGateway(writes(ANSWER), { streaming: undefined });
    telegram.userMessage(TOKEN, { chatId: PRIVATE, userId: 77, text: "hi" });
    telegram.userMessage(TOKEN, { chatId: GROUP, userId: 77, text: "hi all", chatType: "supergroup" });
    await eventually(async () =>
      expect((await outbox(gateway.store)).map((row) => row.status)).toEqual(["sent", "sent"]),
    );
    expect(telegram.calls.map((call) => call.method).filter((method) => /Draft|edit/.test(method))).toEqual([]);
    expect(telegram.sent().map((call) => call.body.text)).toEqual([
      markdownToTelegramHtml(ANSWER),
      markdownToTelegramHtml(ANSWER),
    ]);
    expect(gateway.controls.map((control) => control.onAnswer)).toEqual([undefined, undefined]);
    expect((await outbox(gateway.store)).map((row) => row.editRef)).toEqual([null, null]);
  });
});

describe("Telegram edits a preview into the answer", () => {
  async function platformOn() {
    const platform = createTelegramPlatform({
      token: TOKEN,
      tokenVariable: "TELEGRAM_BOT_TOKEN",
      apiRoot: telegram.apiRoot,
      commands: [],
      logger: pino({ level: "silent" }),
    });
    await platform.login();
    const surface = platform.openPreview?.({ chatId: String(GROUP), chatType: "group" });
    await surface?.show("A preview of the answer, plain text", "answer");
    return { platform, ref: surface?.ref as string };
  }

  it("a retry after a lost acknowledgement finds the message already edited: delivered, nothing sent twice", async () => {
    const { platform, ref } = await platformOn();
    const part = { chatId: String(GROUP), text: "The **answer**", editRef: ref };
    const first = await platform.send(part, "key-1");
    const again = await platform.send(part, "key-1");
    expect(again).toEqual(first);
    expect(callsTo(GROUP, "sendMessage")).toHaveLength(1);
    expect(telegram.shows(GROUP)).toEqual([
      expect.objectContaining({ text: "The <b>answer</b>", parseMode: "HTML", edits: 1 }),
    ]);
  });

  it("edits in plain text when Telegram rejects the entities, as a new message would be sent", async () => {
    const { platform, ref } = await platformOn();
    telegram.failNext("editMessageText", {
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: unsupported start tag "b" at byte offset 4',
    });
    await platform.send({ chatId: String(GROUP), text: "The **answer**", editRef: ref }, "key-1");
    expect(telegram.shows(GROUP)).toEqual([expect.objectContaining({ text: "The **answer**", edits: 1 })]);
    expect(telegram.shows(GROUP)[0]?.parseMode).toBeUndefined();
  });

  it("a preview that can no longer be edited (deleted) gets the answer as a new message", async () => {
    const { platform, ref } = await platformOn();
    const [preview] = telegram.shows(GROUP);
    telegram.deleteMessage(TOKEN, GROUP, preview?.messageId ?? 0);
    const sent = await platform.send({ chatId: String(GROUP), text: "The **answer**", editRef: ref }, "key-1");
    expect(telegram.shows(GROUP)).toEqual([
      expect.objectContaining({ messageId: Number(sent.messageId), text: "The <b>answer</b>", parseMode: "HTML" }),
    ]);
  });

  it("a 429 on the final edit is a retryable delivery error with Telegram's retry_after", async () => {
    const { platform, ref } = await platformOn();
    telegram.failNext("editMessageText", {
      error_code: 429,
      description: "Too Many Requests: retry after 3",
      parameters: { retry_after: 3 },
    });
    await expect(platform.send({ chatId: String(GROUP), text: "x", editRef: ref }, "key-1")).rejects.toMatchObject({
      name: "DeliveryError",
      retryable: true,
      retryAfterMs: 3_000,
    });
  });
});
