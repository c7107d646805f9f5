/**
 * A server that crashes never takes the child down: its call is MCP_UNAVAILABLE with the
 * reason, the server backs off (1 s, 2 s, …, counted afresh after a healthy minute) and
 * the next use after the delay starts it again: a call waits for it, a listing does not
 * (its tools are in a later one); one that does not answer in time is killed, and does
 * not hold up the listings after its first start. Time moves on an injected clock, not
 * by waiting.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../../helpers/toolhost.js";
import { callOn, fakeStdio, makeManager, processesIn, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

describe("a crashing MCP server", SLOW_TEST, () => {
  it("a crash backs off 1 s, then 2 s; the next use after the delay restarts it (a listing in the background); a healthy minute resets the count", async () => {
    let now = 1_000_000;
    const { manager, warnings } = makeManager({
      clock: { now: () => now },
      backOff: { baseMs: 1_000, maxMs: 4_000, healthyMs: 60_000 },
    });
    const call = callOn(manager);
    manager.configure({ servers: [fakeStdio()], ...TIMEOUTS });
    expect((await manager.tools()).length).toBeGreaterThan(0);

    expect(await call("mcp.fake.crash")).toEqual({
      code: "MCP_UNAVAILABLE",
      reason: "fake stopped during the call: exited with code 3",
    });
    await waitFor(() => manager.status()[0]?.state === "backoff", 5_000, "the crash to be noticed");
    expect(manager.status()[0]).toMatchObject({
      state: "backoff",
      restarts: 0,
      lastError: "exited with code 3",
      lastErrorAt: now,
    });
    expect(warnings()).toContain("MCP server fake stopped unexpectedly: exited with code 3");

    // Within the delay: its last tools stay listed, and a call says when it comes back
    // (a tool missing from the list would only be "unknown" to the model).
    const names = async () => (await manager.tools()).map((tool) => tool.name);
    expect(await names()).toContain("mcp.fake.echo");
    expect(await call("mcp.fake.echo", { text: "hi" })).toEqual({
      code: "MCP_UNAVAILABLE",
      reason: "MCP server fake is not running (backoff): exited with code 3; next start in 1 s",
    });
    now += 1_000;
    expect(await call("mcp.fake.echo", { text: "back" })).toEqual({ output: "back", truncated: false });
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 1 });

    // A second crash in a row: twice the delay.
    await call("mcp.fake.crash");
    await waitFor(() => manager.status()[0]?.state === "backoff", 5_000, "the second crash to be noticed");
    now += 1_000;
    expect(await names()).toContain("mcp.fake.echo");
    now += 1_000;
    // The delay has passed: this listing starts it again without waiting (its last tools still listed).
    expect(await names()).toContain("mcp.fake.echo");
    expect(manager.status()[0]).toMatchObject({ state: "starting", restarts: 2 });
    await waitFor(() => manager.status()[0]?.state === "running", 10_000, "the restart in the background");
    expect((await manager.tools()).length).toBeGreaterThan(0);
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 2 });

    // After a healthy minute the count starts afresh: 1 s again.
    now += 60_000;
    await call("mcp.fake.crash");
    await waitFor(() => manager.status()[0]?.state === "backoff", 5_000, "the third crash to be noticed");
    expect(await call("mcp.fake.echo", { text: "hi" })).toMatchObject({
      reason: expect.stringMatching(/next start in 1 s$/),
    });
  });

  it("a server that does not answer within the start timeout is killed; after its first start no listing waits for it", async () => {
    let now = 0;
    const { manager, workTree } = makeManager({ clock: { now: () => now } });
    // A process that never answers (plain node: no tsx to load, so it is up at once).
    const silent = { ...fakeStdio(), args: ["-e", "setInterval(() => undefined, 60_000)"] };
    manager.configure({ servers: [silent], startTimeoutMs: 800, callTimeoutMs: 1_000 });
    // Its first start is waited for, within the start timeout.
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({
      state: "backoff",
      restarts: 0,
      lastError: "did not answer within 800 ms",
    });
    await waitFor(() => processesIn(workTree).length === 0, 3_000, "the slow server to be killed");
    expect(await callOn(manager)("mcp.fake.echo", { text: "hi" })).toEqual({
      code: "MCP_UNAVAILABLE",
      reason: "MCP server fake is not running (backoff): did not answer within 800 ms; next start in 1 s",
    });

    // After the delay a listing starts it again and goes on at once, and so does the next:
    // still starting (it has 800 ms to answer), not waited for.
    now += 1_000;
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ state: "starting", restarts: 1 });
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ state: "starting", restarts: 1 });
  });
});
