/**
 * The set of servers over the child's life: a changed configuration restarts only that
 * server, `test` runs a fresh instance apart from the running one, `stopAll` (the child
 * exiting) leaves no process and starts nothing afterwards.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mcpTestMethod } from "../../../src/toolhost/protocol.js";
import { waitFor } from "../../helpers/toolhost.js";
import { callOn, fakeStdio, makeManager, processesIn, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

describe("the servers' life", SLOW_TEST, () => {
  it("a changed configuration restarts only that server; test() runs a fresh instance apart; stopAll leaves no process", async () => {
    const { manager, workTree } = makeManager();
    const call = callOn(manager);
    for (const folder of ["one", "two"]) mkdirSync(join(workTree, folder));
    const one = fakeStdio({ name: "one", cwd: join(workTree, "one") });
    const two = fakeStdio({ name: "two", cwd: "two" });
    manager.configure({ servers: [one, two], ...TIMEOUTS });
    await manager.tools();
    const [onePid] = processesIn(join(workTree, "one"));
    const [twoPid] = processesIn(join(workTree, "two"));
    expect(onePid).toBeDefined();
    expect(twoPid).toBeDefined();

    manager.configure({ servers: [one, fakeStdio({ name: "two", cwd: "two", env: { CHANGED: "yes" } })], ...TIMEOUTS });
    expect(manager.status().map((server) => server.state)).toEqual(["running", "idle"]);
    await waitFor(
      () => !processesIn(join(workTree, "two")).includes(twoPid as number),
      3_000,
      "the old server two to stop",
    );
    expect(await call("mcp.two.env", { name: "CHANGED" })).toMatchObject({ output: "set" });
    expect(processesIn(join(workTree, "one"))).toContain(onePid);

    const tested = await manager.test("one");
    expect(mcpTestMethod.result.parse(tested)).toMatchObject({ ok: true });
    expect(tested.tools).toContainEqual({ name: "mcp.one.echo", description: "Returns the text it is given." });
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 0 });
    expect(await manager.test("nothing")).toEqual({
      ok: false,
      tools: [],
      error: "no MCP server named nothing is configured (configured: one, two)",
      durationMs: 0,
    });

    await manager.stopAll();
    expect(processesIn(workTree)).toEqual([]);
    expect(manager.status().map((server) => server.state)).toEqual(["stopped", "stopped"]);
    expect(await manager.tools()).toEqual([]);
  });
});
