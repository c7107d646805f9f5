/** Dedup window, inbox and outbox, on SQLite and PostgreSQL. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNEL_DEDUP_WINDOW_MS } from "../../src/store/channel-store.js";
import { openStore } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl, type Engine } from "../helpers/test-store.js";
import { tempDir } from "../helpers/temp-dir.js";

/** A database that outlives its store, so a test can open it again. */
const persistentTarget = async (engine: Engine): Promise<string> =>
  engine === "sqlite" ? join(tempDir(), "laoding.db") : await testDatabaseUrl();

describe.each(STORE_ENGINES)("channel store on %s", (engine) => {
  it("remembers event ids for 12 hours, across reopening the database", async () => {
    const target = await persistentTarget(engine);
    let now = 1_000_000;
    const clock = { now: () => now };
    const first = await openStore(target, clock);
    expect(await first.channels.admit(["k1", "m1"], { botKey: "telegram:main", chatId: "5", message: "{}" })).toEqual({
      duplicate: false,
      inboxId: 1,
    });
    expect(await first.channels.admit(["k1"])).toEqual({ duplicate: true });
    await first.close();
    const second = await openStore(target, clock);
    // A new event id for a message already seen is still a duplicate.
    expect(await second.channels.admit(["k2", "m1"])).toEqual({ duplicate: true });
    now += CHANNEL_DEDUP_WINDOW_MS + 1;
    expect(await second.channels.admit(["k1"], { botKey: "telegram:main", chatId: "5", message: "{}" })).toEqual({
      duplicate: false,
      inboxId: 2,
    });
    expect((await second.channels.queued("telegram:main")).map((row) => row.id)).toEqual([1, 2]);
    await second.close();
  });

  it("keeps remembering a key seen again within the window, and takes one event in once even when it names a key twice", async () => {
    let now = 1_000_000;
    const store = await openTestStore(engine, { clock: { now: () => now } });
    expect(await store.channels.admit(["e1", "e1"])).toEqual({ duplicate: false });
    now += CHANNEL_DEDUP_WINDOW_MS - 10;
    expect(await store.channels.admit(["e1"])).toEqual({ duplicate: true });
    // The re-delivery renewed the key: 20 ms after the first sighting's window ended it is still a duplicate.
    now += 20;
    expect(await store.channels.admit(["e1"])).toEqual({ duplicate: true });
    now += CHANNEL_DEDUP_WINDOW_MS + 1;
    expect(await store.channels.admit(["e1"])).toEqual({ duplicate: false });
    await store.close();
  });

  it("lets exactly one of two concurrent admissions of the same event through (two replicas on PostgreSQL)", async () => {
    let now = 1_000_000;
    const clock = { now: () => now };
    // SQLite: one connection, so one store (its transactions queue). PostgreSQL: two stores on one database, as two replicas.
    const target = await persistentTarget(engine);
    const one = await openStore(target, clock);
    const two = engine === "postgres" ? await openStore(target, clock) : one;
    const inbox = { botKey: "feishu:main", chatId: "c", message: "{}" };
    for (let round = 0; round < 15; round += 1) {
      // Same message id under different event ids, keys named in different orders.
      const results = await Promise.all([
        one.channels.admit([`event-a${round}`, `message-${round}`], inbox),
        two.channels.admit([`message-${round}`, `event-b${round}`], inbox),
      ]);
      expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
    }
    expect(await one.channels.queued("feishu:main")).toHaveLength(15);
    // A key outside the window is taken over by exactly one of two concurrent admissions too.
    now += CHANNEL_DEDUP_WINDOW_MS + 1;
    const again = await Promise.all([
      one.channels.admit(["message-0"], inbox),
      two.channels.admit(["message-0"], inbox),
    ]);
    expect(again.filter((result) => !result.duplicate)).toHaveLength(1);
    expect(await two.channels.queued("feishu:main")).toHaveLength(16);
    if (two !== one) await two.close();
    await one.close();
  });

  it("stores a reply's parts and its message's answer in one step; sent and failed are final", async () => {
    const store = await openTestStore(engine, { clock: { now: () => 5 } });
    const { inboxId } = (await store.channels.admit(["e"], { botKey: "b", chatId: "c", message: "{}" })) as {
      inboxId: number;
    };
    const [one, two] = await store.channels.storeReply({
      botKey: "b",
      chatId: "c",
      inboxId,
      parts: ["one", "two"],
      replyTo: "9",
    });
    expect(await store.channels.queued("b")).toEqual([]);
    expect(
      (await store.channels.pendingOf("b", "c")).map((row) => [row.part, row.parts, row.text, row.replyTo]),
    ).toEqual([
      [1, 2, "one", "9"],
      [2, 2, "two", "9"],
    ]);
    expect(await store.channels.chatsWithPending("b")).toEqual(["c"]);
    await store.channels.attemptFailed(one as number, "busy");
    await store.channels.sent(one as number, "m-1");
    await store.channels.failed(two as number, "refused");
    await store.channels.sent(two as number, "late");
    expect(await store.channels.outbox(one as number)).toMatchObject({
      status: "sent",
      attempts: 2,
      platformMessageId: "m-1",
      lastError: null,
    });
    expect(await store.channels.outbox(two as number)).toMatchObject({
      status: "failed",
      lastError: "refused",
      platformMessageId: null,
    });
    expect(await store.channels.chatsWithPending("b")).toEqual([]);
    await store.close();
  });

  it("rolls a reply back whole when a part cannot be stored, and finishes messages by hand", async () => {
    const store = await openTestStore(engine, { clock: { now: () => 5 } });
    const { inboxId } = (await store.channels.admit(["e"], { botKey: "b", chatId: "c", message: "{}" })) as {
      inboxId: number;
    };
    // An inbox id that does not exist breaks the foreign key: neither part is kept, the message stays queued.
    await expect(
      store.channels.storeReply({ botKey: "b", chatId: "c", inboxId: inboxId + 100, parts: ["one", "two"] }),
    ).rejects.toThrow();
    expect(await store.channels.pendingOf("b", "c")).toEqual([]);
    expect((await store.channels.queued("b")).map((row) => row.id)).toEqual([inboxId]);
    await store.channels.finish(inboxId, "cancelled");
    expect(await store.channels.queued("b")).toEqual([]);
    await store.close();
  });
});
