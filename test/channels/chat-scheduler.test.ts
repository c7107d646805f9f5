/**
 * The chat scheduler on a real store: one turn at a time per chat across every replica on
 * the database, chats in parallel, a message taken in by one replica answered by the one
 * that holds its chat, and a dead replica's chat taken over by another's sweep. On
 * PostgreSQL two replicas are two stores (two pools) on one database, each with its own
 * lease keeper and scheduler; on SQLite one replica. Messages are inbox rows admitted as a
 * channel admits them; the answers are recorded in memory.
 */
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { createChatScheduler, type ChatLease, type ChatScheduler } from "../../src/channels/chat-scheduler.js";
import { createLeaseKeeper, type LeaseKeeper } from "../../src/replica/lease-keeper.js";
import type { InboxRow } from "../../src/store/channel-store.js";
import { systemClock } from "../../src/store/clock.js";
import { chatLeaseName } from "../../src/store/chat-work-store.js";
import type { Engine } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const BOT = "telegram:main";
const TTL = 600;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const until = (check: () => void | Promise<void>, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 20 });

type Answer = { replica: string; chatId: string; id: number; message: string };

type Replica = {
  name: string;
  store: Store;
  keeper: LeaseKeeper;
  scheduler: ChatScheduler;
  /** Queues a message as a channel takes it in on this replica, and pokes this replica's scheduler (unless `poke` is false). */
  takeIn(chatId: string, message: string, poke?: boolean): Promise<number>;
  dead: boolean;
};

type Behaviour = {
  /** How long an answer takes (a model call). */
  answerMs?: number;
  /** Runs inside the answer, after the row is finished. */
  afterAnswer?: (replica: Replica, row: InboxRow) => Promise<void>;
  /** Runs inside the answer before anything else (a test holds an answer here). */
  beforeAnswer?: (replica: Replica, row: InboxRow) => Promise<void>;
  sweepMs?: number;
};

/**
 * Replicas on one database (two on PostgreSQL, one on SQLite) and what they answered:
 * every answer, the most turns one chat ever had at once (across replicas) and the most
 * turns overall.
 */
async function replicasOn(engine: Engine, behaviour: Behaviour = {}) {
  const answers: Answer[] = [];
  const inChat = new Map<string, number>();
  let running = 0;
  const most = { perChat: 0, overall: 0 };
  const logger = pino({ level: process.env.CHAT_TEST_LOG ?? "silent" });
  let admitted = 0;

  const stores: Store[] = [];
  if (engine === "postgres") {
    const url = await testDatabaseUrl();
    stores.push(await openStore(url, systemClock), await openStore(url, systemClock));
  } else {
    stores.push(await openTestStore("sqlite"));
  }

  const replicas: Replica[] = stores.map((store, index) => {
    const name = ["a", "b"][index] as string;
    const keeper = createLeaseKeeper({ leases: store.leases, holder: name, ttlMs: TTL, logger });
    const replica: Replica = {
      name,
      store,
      keeper,
      dead: false,
      scheduler: undefined as unknown as ChatScheduler,
      async takeIn(chatId, message, poke = true) {
        admitted += 1;
        const result = await store.channels.admit([`update-${admitted}`], { botKey: BOT, chatId, message });
        if (result.duplicate || result.inboxId === undefined) throw new Error("not admitted");
        if (poke) replica.scheduler.poke(chatId);
        return result.inboxId;
      },
    };
    const answer = async (row: InboxRow, _lease: ChatLease) => {
      const now = (inChat.get(row.chatId) ?? 0) + 1;
      inChat.set(row.chatId, now);
      running += 1;
      most.perChat = Math.max(most.perChat, now);
      most.overall = Math.max(most.overall, running);
      try {
        await behaviour.beforeAnswer?.(replica, row);
        await sleep(behaviour.answerMs ?? 5);
        answers.push({ replica: name, chatId: row.chatId, id: row.id, message: row.message });
        await store.channels.finish(row.id, "answered");
        await behaviour.afterAnswer?.(replica, row);
      } finally {
        inChat.set(row.chatId, (inChat.get(row.chatId) ?? 1) - 1);
        running -= 1;
      }
    };
    replica.scheduler = createChatScheduler({
      botKey: BOT,
      work: store.chatWork,
      keeper,
      logger,
      answer,
      deliver: async () => 0,
      ...(behaviour.sweepMs !== undefined ? { sweepMs: behaviour.sweepMs } : {}),
    });
    return replica;
  });

  return {
    replicas,
    answers,
    most,
    /** The ids answered in chat `chatId`, in the order they were answered. */
    answeredIn: (chatId: string) => answers.filter((answer) => answer.chatId === chatId).map((answer) => answer.id),
    async close() {
      for (const replica of replicas) await replica.scheduler.close();
      for (const replica of replicas) await replica.keeper.stop();
      for (const replica of replicas) await replica.store.close();
    },
  };
}

/** Every id once, in increasing order. */
function expectInOrderOnce(ids: number[], expected: number[]): void {
  expect(ids).toEqual([...expected].sort((x, y) => x - y));
}

describe.each(STORE_ENGINES)("chat scheduler on %s", (engine) => {
  it("answers a chat's queued messages one at a time, in order, whichever replica took them in", async () => {
    // No sweeps: pokes alone must get every message answered.
    const run = await replicasOn(engine, { answerMs: 15, sweepMs: 60_000 });
    const chatLease = chatLeaseName(BOT, "chat-1");
    const ids: number[] = [];
    // Messages arriving on both replicas while earlier ones are answered: the holder answers them.
    for (let index = 0; index < 12; index += 1) {
      const replica = run.replicas[index % run.replicas.length] as Replica;
      ids.push(await replica.takeIn("chat-1", `m${index}`));
      if (index % 3 === 2) await sleep(20);
    }
    await until(() => expect(run.answers).toHaveLength(12));
    // Then batches with the chat idle in between: each batch is answered by the replica that took it in.
    for (let batch = 0; batch < 4; batch += 1) {
      // Idle: the lease given back and no scheduler still looking at the chat.
      await until(async () => {
        expect(await run.replicas[0]?.store.leases.get(chatLease)).toBeUndefined();
        expect(run.replicas.map((replica) => replica.scheduler.busy)).toEqual(run.replicas.map(() => 0));
      });
      const replica = run.replicas[batch % run.replicas.length] as Replica;
      for (let index = 0; index < 3; index += 1) ids.push(await replica.takeIn("chat-1", `m${12 + batch * 3 + index}`));
      await until(() => expect(run.answers).toHaveLength(15 + batch * 3));
      expect(run.answers.slice(-3).map((answer) => answer.replica)).toEqual([replica.name, replica.name, replica.name]);
    }
    expectInOrderOnce(run.answeredIn("chat-1"), ids);
    expect(run.answers.map((answer) => answer.message)).toEqual(ids.map((_, index) => `m${index}`));
    expect(run.most.perChat).toBe(1);
    expect(new Set(run.answers.map((answer) => answer.replica)).size).toBe(run.replicas.length);
    // Nothing left queued, and the chat's lease was given back.
    expect(await run.replicas[0]?.store.channels.queued(BOT)).toEqual([]);
    await until(async () => expect(await run.replicas[0]?.store.leases.live()).toEqual([]));
    await run.close();
  });

  it("answers many chats in parallel, each in order and once", async () => {
    // No sweeps: each chat is taken by the replica that took its messages in.
    const run = await replicasOn(engine, { answerMs: 40, sweepMs: 60_000 });
    const expected = new Map<string, number[]>();
    for (let round = 0; round < 4; round += 1) {
      for (let chat = 0; chat < 6; chat += 1) {
        const chatId = `chat-${chat}`;
        const replica = run.replicas[chat % run.replicas.length] as Replica;
        expected.set(chatId, [...(expected.get(chatId) ?? []), await replica.takeIn(chatId, `${chatId}/${round}`)]);
      }
    }
    await until(() => expect(run.answers).toHaveLength(24));
    for (const [chatId, ids] of expected) expectInOrderOnce(run.answeredIn(chatId), ids);
    for (const answer of run.answers)
      expect(answer.replica).toBe(run.replicas[Number(answer.chatId.slice(5)) % run.replicas.length]?.name);
    expect(run.most.perChat).toBe(1);
    expect(run.most.overall).toBeGreaterThan(1);
    await run.close();
  });

  it.runIf(engine === "postgres")(
    "a message taken in by the replica that does not hold its chat is answered by the holder",
    async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let firstBegun = false;
      const run = await replicasOn(engine, {
        sweepMs: 60_000,
        beforeAnswer: async (_replica, row) => {
          if (row.message !== "first") return;
          firstBegun = true;
          await held;
        },
      });
      const [a, b] = run.replicas as [Replica, Replica];
      const first = await a.takeIn("chat-x", "first");
      await until(() => expect(firstBegun).toBe(true));
      expect((await b.store.leases.get(chatLeaseName(BOT, "chat-x")))?.holder).toBe("a");

      const second = await b.takeIn("chat-x", "second");
      // b asked for the chat, found it held, and let it be.
      await until(() => expect(b.scheduler.busy).toBe(0));
      expect(run.answers).toEqual([]);
      release();
      await until(() => expect(run.answers).toHaveLength(2));
      expect(run.answers.map((answer) => [answer.id, answer.replica])).toEqual([
        [first, "a"],
        [second, "a"],
      ]);
      expect(run.most.perChat).toBe(1);
      await run.close();
    },
  );

  it.runIf(engine === "postgres")(
    "a replica that dies holding a chat: the other's sweep takes the chat once its lease expires and answers the rest once",
    async () => {
      const diesAfter = 3;
      let deadReplica: Replica | undefined;
      const run = await replicasOn(engine, {
        answerMs: 10,
        afterAnswer: async (replica) => {
          if (deadReplica || run.answers.length !== diesAfter) return;
          // Dies right after its third answer: no more queries, no release, no renewals.
          deadReplica = replica;
          replica.dead = true;
          await replica.store.close();
        },
      });
      const [a, b] = run.replicas as [Replica, Replica];
      const ids: number[] = [];
      // All queued before the work begins (the replica that dies takes nothing in afterwards).
      for (let index = 0; index < 8; index += 1) ids.push(await a.takeIn("chat-d", `m${index}`, false));
      a.scheduler.poke("chat-d");
      await until(() => expect(deadReplica).toBeDefined());
      const dead = deadReplica as Replica;
      const survivor = dead === a ? b : a;
      // The dead replica's lease is still in the table until it expires.
      expect((await survivor.store.leases.get(chatLeaseName(BOT, "chat-d")))?.holder).toBe(dead.name);

      await until(() => expect(run.answers).toHaveLength(8), 15_000);
      expectInOrderOnce(run.answeredIn("chat-d"), ids);
      expect(run.answers.slice(0, diesAfter).every((answer) => answer.replica === dead.name)).toBe(true);
      expect(run.answers.slice(diesAfter).every((answer) => answer.replica === survivor.name)).toBe(true);
      expect(run.most.perChat).toBe(1);
      expect(await survivor.store.channels.queued(BOT)).toEqual([]);
      await until(async () => expect(await survivor.store.leases.live()).toEqual([]));
      // A few more sweeps: nothing is answered twice.
      await sleep(TTL);
      expect(run.answers).toHaveLength(8);

      await survivor.scheduler.close();
      await dead.scheduler.close();
      await survivor.keeper.stop();
      await dead.keeper.stop();
      await survivor.store.close();
    },
  );
});
