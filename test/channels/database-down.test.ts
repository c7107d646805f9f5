/**
 * PostgreSQL going away under a running Telegram bot (docs/scale-out.md, "When PostgreSQL
 * is down"): the real gateway, store, orchestrator and toolhost on a fresh database of the
 * run's test server, grammY against the loopback fake Bot API, and the fake model.
 *
 * The shared server keeps running: the bot's database alone refuses connections
 * (ALTER DATABASE … ALLOW_CONNECTIONS false) and loses the ones it had
 * (pg_terminate_backend), then takes connections again. REPLICA_LEASE_MS is short (3 s),
 * so the sweep looks for queued work every second. Every wait is on a condition.
 */
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { text } from "../../src/agent/texts.js";
import {
  answerEveryMessage,
  eventually,
  freePort,
  startChatTestBot,
  stopChatTestBots,
  type ChatTestBot,
} from "../helpers/chat-bot.js";
import { createReplicaBus } from "../../src/replica/replica-bus.js";
import { openPostgresDriver } from "../../src/store/sql/postgres-driver.js";
import { StoreError } from "../../src/store/sql/sql-driver.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";
import { isRoutingRequest, routeTo, type RecordedRequest } from "../fakes/openai-server.js";
import { startFakeTelegram, type FakeTelegram, type FakeUpdate } from "../fakes/telegram-server.js";

const TOKEN = "123456:TEST-token";
const SECRET = "s3cret-token-0123456789";
const BOT_KEY = "telegram:main";
const DATABASE_DOWN = text("en", "databaseDown");

let telegram: FakeTelegram;
let admin: pg.Pool | undefined;
/** The database the current test took away, brought back after it whatever happened. */
let away: string | undefined;

function adminPool(): pg.Pool {
  admin ??= new pg.Pool({
    connectionString: inject("laodingPostgresAdminUrl") || process.env.LAODING_TEST_POSTGRES_ADMIN_URL,
    max: 1,
  });
  return admin;
}

/** The bot's database refuses new connections and loses the ones it has; the server keeps running. */
async function takeDown(name: string): Promise<void> {
  away = name;
  await adminPool().query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  await adminPool().query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    [name],
  );
  await eventually(async () =>
    expect(
      (await adminPool().query("SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name])).rows[0],
    ).toEqual({ n: 0 }),
  );
}

async function bringBack(name: string): Promise<void> {
  await adminPool().query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
  away = undefined;
}

beforeEach(async () => {
  telegram = await startFakeTelegram();
});
afterEach(async () => {
  if (away) await bringBack(away);
  await stopChatTestBots();
  await telegram.close();
});
afterAll(async () => {
  await admin?.end();
});

async function startBot(env: Record<string, string> = {}): Promise<{ chat: ChatTestBot; database: string }> {
  const url = await testDatabaseUrl();
  telegram.addBot(TOKEN, "laoding_bot");
  const chat = await startChatTestBot({
    env: {
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_ALLOWED_USERS: "*",
      DATABASE_URL: url,
      REPLICA_LEASE_MS: "3000",
      ...env,
    },
  });
  answerEveryMessage(chat.bot.fake, (userText) => `You said: ${userText}`);
  return { chat, database: new URL(url).pathname.slice(1) };
}

async function startWebhookBot(): Promise<{
  chat: ChatTestBot;
  database: string;
  post: (update: FakeUpdate) => Promise<number>;
}> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/telegram/hook`;
  const started = await startBot({
    TELEGRAM_WEBHOOK_URL: url,
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_WEBHOOK_PORT: String(port),
  });
  await telegram.waitFor((calls) => calls.some((call) => call.method === "setWebhook"));
  // As Telegram does: POST the update with the secret; the answer's status says whether it was taken.
  const post = async (update: FakeUpdate) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
      body: JSON.stringify(update),
    });
    await response.arrayBuffer();
    return response.status;
  };
  return { ...started, post };
}

let nextUpdateId = 100;
function update(chatId: number, userText: string): FakeUpdate {
  nextUpdateId += 1;
  return {
    update_id: nextUpdateId,
    message: {
      message_id: nextUpdateId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: "private", first_name: "Ann" },
      from: { id: 77, is_bot: false, first_name: "Ann" },
      text: userText,
    },
  };
}

const textsTo = (chatId: number) =>
  telegram
    .sent()
    .filter((call) => Number(call.body.chat_id) === chatId)
    .map((call) => String(call.body.text));
const lastUserText = (request: RecordedRequest) =>
  [...request.messages].reverse().find((message) => message.role === "user")?.content ?? "";
const asked = (chat: ChatTestBot, userText: string) =>
  chat.bot.fake.requests.filter((request) => !isRoutingRequest(request) && lastUserText(request) === userText).length;

/**
 * Every stored reply part is marked sent. Telegram's acknowledgement comes before the mark: a
 * database gone in between resends that part (at least once, as after a crash), which these
 * tests do not look at.
 */
async function allSent(chat: ChatTestBot): Promise<void> {
  await eventually(async () =>
    expect(await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_outbox WHERE status <> 'sent'")).toEqual(
      { n: 0 },
    ),
  );
}

/** Every message taken in is answered, every reply part sent, and no turn runs: nothing more will be sent. */
async function settled(chat: ChatTestBot, inboxRows: number): Promise<void> {
  await eventually(async () => {
    expect(await chat.runtime.store.sql.all("SELECT status FROM channel_inbox ORDER BY id")).toEqual(
      Array.from({ length: inboxRows }, () => ({ status: "answered" })),
    );
    expect(await chat.runtime.store.sql.get("SELECT COUNT(*) AS n FROM channel_outbox WHERE status <> 'sent'")).toEqual(
      { n: 0 },
    );
  });
  await chat.runtime.orchestrator.idle();
}

describe.skipIf(!STORE_ENGINES.includes("postgres"))("PostgreSQL down under a Telegram bot", () => {
  it("a connection dropped in the middle of a transaction fails that transaction, never the process; the next one works once the database is back", async () => {
    const url = await testDatabaseUrl();
    const database = new URL(url).pathname.slice(1);
    const driver = await openPostgresDriver({ url, onIdleError: () => undefined });
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", record);
    try {
      let resume!: () => void;
      const paused = new Promise<void>((resolve) => (resume = resolve));
      let begun!: () => void;
      const inside = new Promise<void>((resolve) => (begun = resolve));
      const transaction = driver.transaction(async () => {
        await driver.get("SELECT 1 AS one");
        begun();
        await paused;
        return driver.get("SELECT 2 AS two");
      });
      transaction.catch(() => undefined);
      await inside;
      // The server drops the transaction's connection while the work between two statements runs.
      await takeDown(database);
      resume();
      await expect(transaction).rejects.toThrow(StoreError);
      await bringBack(database);
      expect(await driver.transaction(() => driver.get("SELECT 3 AS three"))).toEqual({ three: 3 });
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", record);
      await driver.close();
    }
  });

  it("the replica bus closed while it connects (a reconnect after the database came back) gives its connection back, so the store can close", async () => {
    const driver = await openPostgresDriver({ url: await testDatabaseUrl(), onIdleError: () => undefined });
    try {
      const bus = createReplicaBus(driver, "bus-test", pino({ level: "silent" }));
      const closing = bus.close();
      await bus.ready;
      await closing;
      // A connection still checked out would hold the pool's end() (and the bot's stop) for ever.
      await eventually(() => expect(driver.pool.totalCount - driver.pool.idleCount).toBe(0));
    } finally {
      await driver.close();
    }
  });

  it("webhook: an update posted while the database is away gets 503; posted again once it is back, it is answered exactly once", async () => {
    const { chat, database, post } = await startWebhookBot();
    const before = update(501, "before");
    expect(await post(before)).toBe(200);
    await telegram.waitFor(() => textsTo(501).length === 1);
    await allSent(chat);

    await takeDown(database);
    const whileDown = update(502, "while down");
    expect(await post(whileDown)).toBe(503);
    // Telegram would post it again later; a second try while still away is refused the same way.
    expect(await post(whileDown)).toBe(503);

    await bringBack(database);
    expect(await post(whileDown)).toBe(200);
    await telegram.waitFor(() => textsTo(502).length === 1);
    // One more copy (a retry whose 200 was lost): taken in once, answered once.
    expect(await post(whileDown)).toBe(200);
    expect(await post(before)).toBe(200);
    await settled(chat, 2);
    expect(textsTo(501)).toEqual(["You said: before"]);
    expect(textsTo(502)).toEqual(["You said: while down"]);
    expect(asked(chat, "while down")).toBe(1);
  }, 60_000);

  it("webhook: turns in flight when the database goes away tell their chats once, directly; once it is back the sweep answers them (and what queued behind), each once", async () => {
    const { chat, database, post } = await startWebhookBot();
    // The model holds its answers to the slow messages until the database is away: their turns are in flight then.
    const slow = new Set(["slow", "also slow"]);
    let releaseModel!: () => void;
    const modelHeld = new Promise<void>((resolve) => (releaseModel = resolve));
    chat.bot.fake.respond(async (request) => {
      if (isRoutingRequest(request)) return routeTo([], "chat");
      const userText = lastUserText(request);
      if (slow.has(userText)) await modelHeld;
      return { text: `You said: ${userText}` };
    });
    // Chat 601: one message, so only the sweep can take it up again. Chat 603: a message waits behind the slow one.
    expect(await post(update(601, "slow"))).toBe(200);
    expect(await post(update(603, "also slow"))).toBe(200);
    expect(await post(update(603, "behind it"))).toBe(200);
    expect(await post(update(602, "another chat"))).toBe(200);
    await telegram.waitFor(() => textsTo(602).length === 1);
    await eventually(() => expect([asked(chat, "slow"), asked(chat, "also slow")]).toEqual([1, 1]));
    await allSent(chat);

    await takeDown(database);
    releaseModel();
    // The turns cannot store their answers: each chat is told, sent directly (the outbox is in the database).
    await telegram.waitFor(() => textsTo(601).length === 1 && textsTo(603).length === 1);
    expect(textsTo(601)).toEqual([DATABASE_DOWN]);
    expect(textsTo(603)).toEqual([DATABASE_DOWN]);

    // No user action from here on: the queued messages are found once the database is back.
    await bringBack(database);
    await telegram.waitFor(() => textsTo(601).length === 2 && textsTo(603).length === 3, 20_000);
    await settled(chat, 4);
    expect(textsTo(601)).toEqual([DATABASE_DOWN, "You said: slow"]);
    expect(textsTo(603)).toEqual([DATABASE_DOWN, "You said: also slow", "You said: behind it"]);
    expect(textsTo(602)).toEqual(["You said: another chat"]);
    // The told-once text is not in the outbox; the replies are, each sent once.
    expect(
      await chat.runtime.store.sql.all(
        "SELECT chat_id AS chatId, text, status FROM channel_outbox ORDER BY chat_id, id",
      ),
    ).toEqual([
      { chatId: "601", text: "You said: slow", status: "sent" },
      { chatId: "602", text: "You said: another chat", status: "sent" },
      { chatId: "603", text: "You said: also slow", status: "sent" },
      { chatId: "603", text: "You said: behind it", status: "sent" },
    ]);
    // The interrupted turns were finished under their first traces: one user row each, one answer, the same trace.
    const rows = await chat.runtime.store.sql.all<{ chatId: string; role: string; content: string; traceId: string }>(
      "SELECT s.chat_id AS chatId, m.role, m.content, m.trace_id AS traceId FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.kind = 'chat' AND s.chat_id IN ('601', '603') ORDER BY s.chat_id, m.id",
    );
    expect(rows.map((row) => [row.chatId, row.role, row.content])).toEqual([
      ["601", "user", "slow"],
      ["601", "assistant", "You said: slow"],
      ["603", "user", "also slow"],
      ["603", "assistant", "You said: also slow"],
      ["603", "user", "behind it"],
      ["603", "assistant", "You said: behind it"],
    ]);
    expect(rows[1]?.traceId).toBe(rows[0]?.traceId);
    expect(rows[3]?.traceId).toBe(rows[2]?.traceId);
    // Each slow message was asked of the model again (its first answer could not be stored), the others once.
    expect([
      asked(chat, "slow"),
      asked(chat, "also slow"),
      asked(chat, "behind it"),
      asked(chat, "another chat"),
    ]).toEqual([2, 2, 1, 1]);
  }, 60_000);

  it("long polling: an update polled while the database is away waits (at the bot, then at Telegram) and is answered once it is back, also after the poller lost its lease", async () => {
    const { chat, database } = await startBot();
    await eventually(() => expect(telegram.polls.length).toBeGreaterThan(0));
    telegram.userMessage(TOKEN, { chatId: 701, userId: 77, text: "before" });
    await telegram.waitFor(() => textsTo(701).length === 1);
    await allSent(chat);

    await takeDown(database);
    const polled = telegram.userMessage(TOKEN, { chatId: 701, userId: 77, text: "while down" });
    // Past a whole lease without the database, this replica stops polling (another one could lead now).
    await eventually(() => expect(chat.runtime.replica.keeper.isHeld(`receive:${BOT_KEY}`)).toBe(false));
    await bringBack(database);

    await telegram.waitFor(() => textsTo(701).length === 2, 20_000);
    telegram.userMessage(TOKEN, { chatId: 701, userId: 77, text: "after" });
    await telegram.waitFor(() => textsTo(701).length === 3);
    await settled(chat, 3);
    expect(textsTo(701)).toEqual(["You said: before", "You said: while down", "You said: after"]);
    expect(telegram.polls.some((poll) => poll.offset > polled.update_id)).toBe(true);
  }, 60_000);

  it("long polling: a stop while an update waits to be stored does not confirm it; the next start answers it", async () => {
    const { chat, database } = await startBot();
    await eventually(() => expect(telegram.polls.length).toBeGreaterThan(0));
    await takeDown(database);
    const pushedAt = Date.now();
    const polled = telegram.userMessage(TOKEN, { chatId: 801, userId: 77, text: "kept at Telegram" });
    // Handed to the bot: a poll from an offset at or before it was answered after it arrived.
    await eventually(() =>
      expect(telegram.polls.some((poll) => poll.offset <= polled.update_id && (poll.endedAt ?? 0) >= pushedAt)).toBe(
        true,
      ),
    );
    await chat.stop();
    // Telegram forgets what a getUpdates offset passed: the update must still be there.
    expect(telegram.polls.filter((poll) => poll.offset > polled.update_id)).toEqual([]);
    await bringBack(database);
    await chat.restart();
    await telegram.waitFor(() => textsTo(801).length === 1, 20_000);
    await settled(chat, 1);
    expect(textsTo(801)).toEqual(["You said: kept at Telegram"]);
  }, 60_000);
});
