/**
 * What replicas meet on in the database: named leases, the replica registry, and the chat
 * work queries (unheld chats, the next queued message, claimed reply parts). On SQLite and
 * PostgreSQL; races between two replicas on PostgreSQL use two stores (two pools) on one
 * database, as two processes would.
 */
import { describe, expect, it } from "vitest";
import { chatLeaseName } from "../../src/store/chat-work-store.js";
import { openStore, type Store } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const TTL = 1_000;

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms), set: (at: number) => (now = at) };
}

/** Two stores on one fresh PostgreSQL database: two replicas. Opened one after the other (the first migrates). */
async function twoReplicas(clock = manualClock()): Promise<[Store, Store]> {
  const url = await testDatabaseUrl();
  const one = await openStore(url, clock);
  const two = await openStore(url, clock);
  return [one, two];
}

describe.each(STORE_ENGINES)("leases on %s", (engine) => {
  it("takes a free name, refuses one held by another, takes an expired one, renews its own keeping acquiredAt", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    const start = clock.now();
    expect(await store.leases.acquire("job", "a", TTL)).toBe(true);
    expect(await store.leases.get("job")).toEqual({
      name: "job",
      holder: "a",
      expiresAt: start + TTL,
      acquiredAt: start,
    });

    clock.advance(TTL / 2);
    expect(await store.leases.acquire("job", "b", TTL)).toBe(false);
    expect((await store.leases.get("job"))?.holder).toBe("a");

    // Its own: renewed until now + ttl, acquired when it was first taken.
    expect(await store.leases.acquire("job", "a", TTL)).toBe(true);
    expect(await store.leases.get("job")).toEqual({
      name: "job",
      holder: "a",
      expiresAt: start + TTL / 2 + TTL,
      acquiredAt: start,
    });

    // Exactly at its expiry it is still a's; one millisecond later it is free.
    clock.set(start + TTL / 2 + TTL);
    expect(await store.leases.acquire("job", "b", TTL)).toBe(false);
    clock.advance(1);
    expect(await store.leases.acquire("job", "b", TTL)).toBe(true);
    const taken = clock.now();
    expect(await store.leases.get("job")).toEqual({
      name: "job",
      holder: "b",
      expiresAt: taken + TTL,
      acquiredAt: taken,
    });
    await store.close();
  });

  it("renews only for the holder; releases only the holder's lease; releaseAll gives up everything of one holder", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    expect(await store.leases.acquire("x", "a", TTL)).toBe(true);
    expect(await store.leases.acquire("y", "a", TTL)).toBe(true);
    expect(await store.leases.acquire("z", "b", TTL)).toBe(true);

    clock.advance(300);
    expect(await store.leases.renew("x", "b", TTL)).toBe(false);
    expect((await store.leases.get("x"))?.expiresAt).toBe(clock.now() - 300 + TTL);
    expect(await store.leases.renew("x", "a", TTL)).toBe(true);
    expect((await store.leases.get("x"))?.expiresAt).toBe(clock.now() + TTL);
    expect(await store.leases.renew("nothing", "a", TTL)).toBe(false);

    await store.leases.release("x", "b");
    expect((await store.leases.get("x"))?.holder).toBe("a");
    await store.leases.release("x", "a");
    expect(await store.leases.get("x")).toBeUndefined();
    // A released name is free for anyone at once.
    expect(await store.leases.acquire("x", "b", TTL)).toBe(true);

    expect(await store.leases.releaseAll("b")).toBe(2);
    expect(await store.leases.releaseAll("b")).toBe(0);
    expect((await store.leases.live()).map((lease) => [lease.name, lease.holder])).toEqual([["y", "a"]]);
    await store.close();
  });

  it("heldBy and live list the leases not expired yet, by name", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    await store.leases.acquire("b-short", "a", 100);
    await store.leases.acquire("a-long", "a", 5_000);
    await store.leases.acquire("c-other", "b", 5_000);
    expect((await store.leases.heldBy("a")).map((lease) => lease.name)).toEqual(["a-long", "b-short"]);
    expect((await store.leases.live()).map((lease) => lease.name)).toEqual(["a-long", "b-short", "c-other"]);
    clock.advance(101);
    expect((await store.leases.heldBy("a")).map((lease) => lease.name)).toEqual(["a-long"]);
    expect((await store.leases.live()).map((lease) => lease.name)).toEqual(["a-long", "c-other"]);
    // An expired lease is not live, but its row stays until someone takes the name.
    expect((await store.leases.get("b-short"))?.holder).toBe("a");
    expect(await store.leases.heldBy("nobody")).toEqual([]);
    await store.close();
  });

  it.runIf(engine === "postgres")(
    "gives a name to exactly one of two replicas acquiring it at once, free or expired, round after round",
    async () => {
      const clock = manualClock();
      const [one, two] = await twoReplicas(clock);
      for (let round = 0; round < 40; round += 1) {
        const name = `race-${round % 10}`;
        // Rounds 0-9 race for a new name; later rounds for a name whose lease expired (a third replica died holding it).
        if (round >= 10) clock.advance(TTL + 1);
        const results = await Promise.all([one.leases.acquire(name, "one", TTL), two.leases.acquire(name, "two", TTL)]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results[0] ? "one" : "two";
        expect((await one.leases.get(name))?.holder).toBe(winner);
      }
      await two.close();
      await one.close();
    },
  );
});

describe.each(STORE_ENGINES)("replica registry on %s", (engine) => {
  it("registers, sees, lists the live ones and forgets", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    const started = clock.now();
    await store.replicas.register({ name: "r1", host: "h1", pid: 11, configFingerprint: '{"A":"1"}' });
    clock.advance(100);
    await store.replicas.register({ name: "r2", host: "h2", pid: 22, configFingerprint: "{}" });
    expect(await store.replicas.live(1_000)).toEqual([
      { name: "r1", host: "h1", pid: 11, configFingerprint: '{"A":"1"}', startedAt: started, seenAt: started },
      { name: "r2", host: "h2", pid: 22, configFingerprint: "{}", startedAt: started + 100, seenAt: started + 100 },
    ]);

    // r1 keeps being seen, r2 goes quiet.
    clock.advance(900);
    await store.replicas.seen("r1");
    clock.advance(200);
    expect((await store.replicas.live(1_000)).map((replica) => replica.name)).toEqual(["r1"]);
    expect((await store.replicas.live(1_000))[0]).toMatchObject({ startedAt: started, seenAt: started + 1_000 });

    // A restart under the same name registers afresh.
    await store.replicas.register({ name: "r2", host: "h3", pid: 33, configFingerprint: '{"B":"2"}' });
    expect(
      (await store.replicas.live(1_000)).map((replica) => [
        replica.name,
        replica.host,
        replica.pid,
        replica.configFingerprint,
        replica.startedAt,
      ]),
    ).toEqual([
      ["r1", "h1", 11, '{"A":"1"}', started],
      ["r2", "h3", 33, '{"B":"2"}', clock.now()],
    ]);

    await store.replicas.forget("r1");
    await store.replicas.seen("r1");
    expect((await store.replicas.live(10_000)).map((replica) => replica.name)).toEqual(["r2"]);
    await store.close();
  });
});

const BOT = "telegram:main";

/** Queues a message of `chatId` for an answer; returns its inbox id. */
async function queue(store: Store, chatId: string, message = "{}", botKey = BOT): Promise<number> {
  const result = await store.channels.admit([`${botKey}:${chatId}:${Math.random()}`], { botKey, chatId, message });
  if (result.duplicate || result.inboxId === undefined) throw new Error("not admitted");
  return result.inboxId;
}

describe.each(STORE_ENGINES)("chat work on %s", (engine) => {
  it("lists chats with queued messages or pending parts that no live lease holds", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    expect(await store.chatWork.unheldChats(BOT)).toEqual([]);

    await queue(store, "c-queued");
    const answered = await queue(store, "c-answered");
    await store.channels.finish(answered, "answered");
    const replied = await queue(store, "c-pending");
    // The reply stored marks the message answered: only its pending part is work now.
    const [part] = await store.channels.storeReply({
      botKey: BOT,
      chatId: "c-pending",
      inboxId: replied,
      parts: ["hello"],
    });
    const sentReply = await queue(store, "c-sent");
    const [sentPart] = await store.channels.storeReply({
      botKey: BOT,
      chatId: "c-sent",
      inboxId: sentReply,
      parts: ["done"],
    });
    await store.channels.sent(sentPart as number, "m1");
    await queue(store, "c-held");
    await queue(store, "c-expired");
    await queue(store, "c-other-bot", "{}", "feishu:main");
    expect(part).toBeTypeOf("number");

    await store.leases.acquire(chatLeaseName(BOT, "c-held"), "r1", 5_000);
    await store.leases.acquire(chatLeaseName(BOT, "c-expired"), "r1", 100);
    // The same chat id under another bot's lease does not hide this bot's chat.
    await store.leases.acquire(chatLeaseName("feishu:main", "c-queued"), "r1", 5_000);
    clock.advance(101);

    expect(await store.chatWork.unheldChats(BOT)).toEqual(["c-expired", "c-pending", "c-queued"]);
    expect(await store.chatWork.unheldChats("feishu:main")).toEqual(["c-other-bot"]);

    // The holder lets go: the chat is listed again.
    await store.leases.release(chatLeaseName(BOT, "c-held"), "r1");
    expect(await store.chatWork.unheldChats(BOT)).toEqual(["c-expired", "c-held", "c-pending", "c-queued"]);
    await store.close();
  });

  it("gives a chat's oldest queued message, says whether it has work, and tells a resumed turn from a first one", async () => {
    const store = await openTestStore(engine, { clock: manualClock() });
    expect(await store.chatWork.nextQueued(BOT, "c")).toBeUndefined();
    expect(await store.chatWork.hasWork(BOT, "c")).toBe(false);
    const first = await queue(store, "c", '{"n":1}');
    const second = await queue(store, "c", '{"n":2}');
    await queue(store, "d", '{"n":3}');
    expect(await store.chatWork.nextQueued(BOT, "c")).toMatchObject({
      id: first,
      chatId: "c",
      message: '{"n":1}',
      status: "queued",
      botKey: BOT,
    });
    expect(await store.chatWork.hasWork(BOT, "c")).toBe(true);
    expect(await store.chatWork.hasWork("other", "c")).toBe(false);

    expect(await store.chatWork.start(first)).toEqual({ resumed: false, attempts: 1 });
    expect(await store.chatWork.start(first)).toEqual({ resumed: true, attempts: 2 });
    expect(await store.chatWork.start(first)).toEqual({ resumed: true, attempts: 3 });
    expect(await store.chatWork.start(second)).toEqual({ resumed: false, attempts: 1 });

    await store.channels.finish(first, "answered");
    expect((await store.chatWork.nextQueued(BOT, "c"))?.id).toBe(second);
    await store.channels.storeReply({ botKey: BOT, chatId: "c", inboxId: second, parts: ["a"] });
    expect(await store.chatWork.nextQueued(BOT, "c")).toBeUndefined();
    // No message waits, but a part does.
    expect(await store.chatWork.hasWork(BOT, "c")).toBe(true);
    const [row] = await store.channels.pendingOf(BOT, "c");
    await store.channels.sent((row as { id: number }).id, "m");
    expect(await store.chatWork.hasWork(BOT, "c")).toBe(false);
    await store.close();
  });

  it("claims a chat's parts in id order for one holder at a time; another holder gets nothing until the claim expires", async () => {
    const clock = manualClock();
    const store = await openTestStore(engine, { clock });
    const inboxId = await queue(store, "c");
    const [p1, p2, p3] = await store.channels.storeReply({
      botKey: BOT,
      chatId: "c",
      inboxId,
      parts: ["one", "two", "three"],
    });

    const first = await store.chatWork.claimNextPart(BOT, "c", "a", TTL);
    expect(first).toMatchObject({
      id: p1,
      part: 1,
      parts: 3,
      text: "one",
      status: "pending",
      chatId: "c",
      botKey: BOT,
    });
    // The holder asking again (a retry) gets the same part; another holder gets nothing, not a later part.
    expect((await store.chatWork.claimNextPart(BOT, "c", "a", TTL))?.id).toBe(p1);
    expect(await store.chatWork.claimNextPart(BOT, "c", "b", TTL)).toBeUndefined();
    clock.advance(TTL);
    expect(await store.chatWork.claimNextPart(BOT, "c", "b", TTL)).toBeUndefined();

    // a died mid-send: once its claim expired, b takes the same part over.
    clock.advance(1);
    expect((await store.chatWork.claimNextPart(BOT, "c", "b", TTL))?.id).toBe(p1);
    expect(await store.chatWork.claimNextPart(BOT, "c", "a", TTL)).toBeUndefined();
    await store.channels.sent(p1 as number, "m1");
    expect((await store.chatWork.claimNextPart(BOT, "c", "b", TTL))?.id).toBe(p2);
    await store.channels.failed(p2 as number, "refused");
    expect((await store.chatWork.claimNextPart(BOT, "c", "b", TTL))?.id).toBe(p3);
    await store.channels.sent(p3 as number, "m3");
    expect(await store.chatWork.claimNextPart(BOT, "c", "b", TTL)).toBeUndefined();
    expect(await store.chatWork.claimNextPart(BOT, "other-chat", "b", TTL)).toBeUndefined();
    await store.close();
  });

  it.runIf(engine === "postgres")(
    "never gives one part to two replicas claiming at once, and never a later part while an earlier one is claimed",
    async () => {
      const clock = manualClock();
      const [one, two] = await twoReplicas(clock);
      for (let round = 0; round < 25; round += 1) {
        const chatId = `c${round}`;
        const inboxId = await queue(one, chatId);
        const ids = await one.channels.storeReply({ botKey: BOT, chatId, inboxId, parts: ["one", "two", "three"] });
        const [a, b] = await Promise.all([
          one.chatWork.claimNextPart(BOT, chatId, "one", TTL),
          two.chatWork.claimNextPart(BOT, chatId, "two", TTL),
        ]);
        const claimed = [a, b].filter((row) => row !== undefined);
        expect(claimed.map((row) => row.id)).toEqual([ids[0]]);
        const winner = a ? "one" : "two";
        expect(
          await one.sql.get("SELECT claimed_by AS claimedBy FROM channel_outbox WHERE id = ?", [ids[0] as number]),
        ).toEqual({ claimedBy: winner });
        expect(
          await one.sql.all("SELECT id FROM channel_outbox WHERE chat_id = ? AND claimed_by IS NOT NULL", [chatId]),
        ).toHaveLength(1);
      }
      await two.close();
      await one.close();
    },
  );
});
