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

  it("keeps a turn's preview until its reply is stored, then moves it to the reply's first part in the same step", async () => {
    let now = 5;
    const store = await openTestStore(engine, { clock: { now: () => now } });
    const admit = async (key: string) =>
      ((await store.channels.admit([key], { botKey: "b", chatId: "c", message: "{}" })) as { inboxId: number }).inboxId;
    const first = await admit("e1");
    const second = await admit("e2");
    expect(await store.channels.streamOf(first)).toBeUndefined();
    if (engine === "postgres")
      // Keyed by the inbox row's id: a plain column, never an identity of its own.
      expect(
        await store.sql.get(
          "SELECT is_identity AS identity, data_type AS type FROM information_schema.columns WHERE table_name = 'channel_streams' AND column_name = 'inbox_id'",
        ),
      ).toEqual({ identity: "NO", type: "bigint" });
    await store.channels.saveStream({ inboxId: first, botKey: "b", chatId: "c", ref: "c:100" });
    now = 6;
    // Saved again (a new preview after a restart): replaced, never a second row.
    await store.channels.saveStream({ inboxId: first, botKey: "b", chatId: "c", ref: "c:101" });
    await store.channels.saveStream({ inboxId: second, botKey: "b", chatId: "c", ref: "c:200" });
    expect(await store.channels.streamOf(first)).toBe("c:101");
    expect(
      await store.sql.all(
        "SELECT inbox_id AS inboxId, ref, created_at AS createdAt FROM channel_streams ORDER BY inbox_id",
      ),
    ).toEqual([
      { inboxId: first, ref: "c:101", createdAt: 6 },
      { inboxId: second, ref: "c:200", createdAt: 6 },
    ]);

    await store.channels.storeReply({
      botKey: "b",
      chatId: "c",
      inboxId: first,
      parts: ["one", "two"],
      editRef: "c:101",
    });
    expect((await store.channels.pendingOf("b", "c")).map((row) => [row.part, row.text, row.editRef])).toEqual([
      [1, "one", "c:101"],
      [2, "two", null],
    ]);
    expect(await store.channels.streamOf(first)).toBeUndefined();
    expect(await store.channels.streamOf(second)).toBe("c:200");
    // A reply without a preview: no edit ref; a gateway's own reply (no inbox row) leaves the streams alone.
    await store.channels.storeReply({ botKey: "b", chatId: "c", parts: ["refusal"] });
    expect((await store.channels.pendingOf("b", "c")).at(-1)).toMatchObject({ text: "refusal", editRef: null });
    expect(await store.channels.streamOf(second)).toBe("c:200");

    // A message finished without a reply (cancelled by a stop) leaves its preview abandoned, for the next start to mark.
    expect(await store.channels.abandonedStreams("b")).toEqual([]);
    await store.channels.finish(second, "cancelled");
    expect(await store.channels.abandonedStreams("b")).toEqual([
      { inboxId: second, botKey: "b", chatId: "c", ref: "c:200", createdAt: 6 },
    ]);
    expect(await store.channels.abandonedStreams("other")).toEqual([]);
    await store.channels.dropStream(second);
    expect(await store.channels.streamOf(second)).toBeUndefined();
    await store.close();
  });

  it("rolls a stream's move back with the reply: a reply that cannot be stored keeps the preview", async () => {
    const store = await openTestStore(engine, { clock: { now: () => 5 } });
    const { inboxId } = (await store.channels.admit(["e"], { botKey: "b", chatId: "c", message: "{}" })) as {
      inboxId: number;
    };
    await store.channels.saveStream({ inboxId, botKey: "b", chatId: "c", ref: "c:7" });
    // The gateway stores a reply inside its own transaction (fenced by the chat's lease): one that fails after it undoes the move too.
    await expect(
      store.sql.transaction(async () => {
        await store.channels.storeReply({ botKey: "b", chatId: "c", inboxId, parts: ["one"], editRef: "c:7" });
        throw new Error("the lease was lost");
      }),
    ).rejects.toThrow("the lease was lost");
    expect(await store.channels.streamOf(inboxId)).toBe("c:7");
    expect(await store.channels.pendingOf("b", "c")).toEqual([]);
    await store.close();
  });
});
