/** Dedup window, inbox and outbox on a real SQLite file. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHANNEL_DEDUP_WINDOW_MS } from "../../src/store/channel-store.js";
import { openStore } from "../../src/store/store.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("channel store", () => {
  it("remembers event ids for 12 hours, across reopening the database", () => {
    const file = join(tempDir(), "laoding.db");
    let now = 1_000_000;
    const clock = { now: () => now };
    const first = openStore(file, clock);
    expect(first.channels.admit(["k1", "m1"], { botKey: "telegram:main", chatId: "5", message: "{}" })).toEqual({ duplicate: false, inboxId: 1 });
    expect(first.channels.admit(["k1"])).toEqual({ duplicate: true });
    first.close();
    const second = openStore(file, clock);
    // A new event id for a message already seen is still a duplicate.
    expect(second.channels.admit(["k2", "m1"])).toEqual({ duplicate: true });
    now += CHANNEL_DEDUP_WINDOW_MS + 1;
    expect(second.channels.admit(["k1"], { botKey: "telegram:main", chatId: "5", message: "{}" })).toEqual({ duplicate: false, inboxId: 2 });
    expect(second.channels.queued("telegram:main").map((row) => row.id)).toEqual([1, 2]);
    second.close();
  });

  it("stores a reply's parts and its message's answer in one step; sent and failed are final", () => {
    const store = openStore(join(tempDir(), "laoding.db"), { now: () => 5 });
    const { inboxId } = store.channels.admit(["e"], { botKey: "b", chatId: "c", message: "{}" }) as { inboxId: number };
    const [one, two] = store.channels.storeReply({ botKey: "b", chatId: "c", inboxId, parts: ["one", "two"], replyTo: "9" });
    expect(store.channels.queued("b")).toEqual([]);
    expect(store.channels.pendingOf("b", "c").map((row) => [row.part, row.parts, row.text, row.replyTo])).toEqual([[1, 2, "one", "9"], [2, 2, "two", "9"]]);
    store.channels.attemptFailed(one as number, "busy");
    store.channels.sent(one as number, "m-1");
    store.channels.failed(two as number, "refused");
    store.channels.sent(two as number, "late");
    expect(store.channels.outbox(one as number)).toMatchObject({ status: "sent", attempts: 2, platformMessageId: "m-1", lastError: null });
    expect(store.channels.outbox(two as number)).toMatchObject({ status: "failed", lastError: "refused", platformMessageId: null });
    expect(store.channels.chatsWithPending("b")).toEqual([]);
    store.close();
  });
});
