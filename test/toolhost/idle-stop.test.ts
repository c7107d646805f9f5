/**
 * TOOLHOST_IDLE_STOP_MS: a child that serves no call for a while is stopped (its memory
 * given back) and the next call starts a new one; a child with a call in progress is never
 * stopped. The tests wait on the supervisor's state events, not on timers.
 */
import { describe, expect, it } from "vitest";
import { isAlive, makeClient } from "../helpers/toolhost.js";

describe("idle stop", () => {
  it("an idle child is parked and the next call starts a new one", async () => {
    const { client, supervisor, spawns } = makeClient({ idleStopMs: 150 });
    const states: string[] = [];
    supervisor.onDidChangeState(({ newState }) => states.push(newState));
    expect(await client.callTool({ name: "file.read", args: { n: 1 } })).toMatchObject({ ok: true });
    const first = supervisor.pid;
    expect(await supervisor.whenState((state) => state === "idle", 10_000)).toBe("idle");
    expect(isAlive(first)).toBe(false);
    expect(states).toEqual(["starting", "running", "parking", "idle"]);
    // Parking is not a crash: nothing was counted, nothing restarted on its own.
    expect(spawns).toHaveLength(1);
    const again = await client.callTool({ name: "file.read", args: { n: 2 } });
    expect(again).toMatchObject({ ok: true });
    if (again.ok) expect(JSON.parse(again.output).pid).toBe(spawns[1]?.pid);
    expect(spawns).toHaveLength(2);
  });

  it("a call in progress keeps its child, however long it takes", async () => {
    const { client, supervisor } = makeClient({ idleStopMs: 100 });
    await client.ping();
    const states: string[] = [];
    supervisor.onDidChangeState(({ newState }) => states.push(newState));
    const slow = await client.callTool({ name: "file.read", args: { sleepMs: 600 } });
    expect(slow).toMatchObject({ ok: true });
    // Six idle periods passed during the call: the child was not parked under it.
    expect(states).toEqual([]);
    expect(await supervisor.whenState((state) => state === "idle", 10_000)).toBe("idle");
  });

  it("without an idle stop the child stays", async () => {
    const { client, supervisor } = makeClient();
    await client.callTool({ name: "file.read", args: {} });
    expect(await supervisor.whenState((state) => state !== "running", 500)).toBeUndefined();
  });
});
