/**
 * A remote MCP server over Streamable HTTP (test/fakes/mcp-http-server.ts, the SDK's own
 * server transport on node:http), reached with the fetch the child is given (here the
 * direct one; through the egress proxy in the end-to-end test): its headers go to it and
 * nowhere else, a wrong token is a failed start that never shows the token, a server
 * that goes away is MCP_UNAVAILABLE and is connected afresh on a later use.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpHttpServer, type FakeMcpHttpServer } from "../../fakes/mcp-http-server.js";
import { callOn, makeManager, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

const TOKEN = "remote-secret-token-123";
let remote: FakeMcpHttpServer;
beforeAll(async () => {
  remote = await startMcpHttpServer({ token: TOKEN });
});
afterAll(async () => {
  await remote.close();
});

const docs = (token: string, name = "docs") =>
  ({ name, transport: "http", url: remote.url, headers: { Authorization: `Bearer ${token}` } }) as const;

describe("a remote MCP server over Streamable HTTP", SLOW_TEST, () => {
  it("lists and calls its tools with the configured headers; arguments are checked against its schema", async () => {
    const { manager } = makeManager({ fetch: globalThis.fetch });
    manager.configure({ servers: [docs(TOKEN)], ...TIMEOUTS });
    const tools = new Map((await manager.tools()).map((tool) => [tool.name, tool]));
    expect([...tools.keys()]).toEqual(["mcp.docs.echo", "mcp.docs.add"]);
    expect(tools.get("mcp.docs.echo")?.hints.readOnlyHint).toBe(true);
    expect(await callOn(manager)("mcp.docs.echo", { text: "hi" })).toEqual({ output: "remote: hi", truncated: false });
    expect(await callOn(manager)("mcp.docs.add", { a: 2, b: 3 })).toMatchObject({ output: "5" });
    const checked = tools.get("mcp.docs.add")?.inputSchema.safeParse({ a: "two" });
    expect(checked?.success).toBe(false);
    expect(checked?.error?.issues.map((issue) => [issue.path.join("."), issue.message]).sort()).toEqual([
      ["a", "must be number"],
      ["b", "Invalid input: expected value, received undefined"],
    ]);
    expect(manager.status()[0]).toMatchObject({ name: "docs", transport: "http", state: "running" });
  });

  it("a wrong token is a failed start whose reason says why and never shows the token", async () => {
    const { manager, logs } = makeManager({ fetch: globalThis.fetch });
    const refusedBefore = remote.refused();
    manager.configure({ servers: [docs("wrong-token-value-456", "wrongkey")], ...TIMEOUTS });
    expect(await manager.tools()).toEqual([]);
    expect(remote.refused()).toBeGreaterThan(refusedBefore);
    const [status] = manager.status();
    expect(status).toMatchObject({
      state: "backoff",
      lastError: `cannot connect to ${new URL(remote.url).origin}: HTTP 401: Error POSTing to endpoint: {"error":"missing or wrong bearer token"}`,
    });
    expect(JSON.stringify([manager.status(), logs])).not.toContain("wrong-token-value-456");
  });

  it("without a fetch (no network for the agent) a remote server fails for good, saying what to do", async () => {
    const { manager } = makeManager();
    manager.configure({ servers: [docs(TOKEN)], ...TIMEOUTS });
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "this agent has no network for remote MCP servers: put the server's host on the agent's network allow list",
    });
  });

  it("a host the egress proxy refuses is NETWORK_REFUSED with the proxy's reason", async () => {
    // The child's proxied fetch throws the proxy's refusal as an EgressRefusedError
    // (net/egress-errors.ts); this fetch refuses the same way once the host is taken off the list.
    let refusing = false;
    const fetch: typeof globalThis.fetch = (url, init) => {
      if (!refusing) return globalThis.fetch(url, init);
      const refusal = new Error("127.0.0.1 is not on this agent's network allow list");
      refusal.name = "EgressRefusedError";
      return Promise.reject(refusal);
    };
    const { manager } = makeManager({ fetch });
    manager.configure({ servers: [docs(TOKEN)], ...TIMEOUTS });
    expect(await callOn(manager)("mcp.docs.echo", { text: "one" })).toMatchObject({ output: "remote: one" });
    refusing = true;
    expect(await callOn(manager)("mcp.docs.echo", { text: "two" })).toEqual({
      code: "NETWORK_REFUSED",
      reason: "127.0.0.1 is not on this agent's network allow list",
    });
  });

  it("a server that goes away is MCP_UNAVAILABLE, and a later use after the back-off connects afresh", async () => {
    let now = 0;
    const { manager } = makeManager({ fetch: globalThis.fetch, clock: { now: () => now } });
    const other = await startMcpHttpServer({ token: TOKEN });
    manager.configure({ servers: [{ ...docs(TOKEN), url: other.url }], ...TIMEOUTS });
    expect(await callOn(manager)("mcp.docs.echo", { text: "one" })).toMatchObject({ output: "remote: one" });
    await other.close();
    expect(await callOn(manager)("mcp.docs.echo", { text: "two" })).toEqual({
      code: "MCP_UNAVAILABLE",
      reason: expect.stringMatching(/^cannot reach docs: fetch failed/),
    });
    expect(manager.status()[0]).toMatchObject({ state: "backoff" });
    now += 1_000;
    // The same address again (a restarted remote): found on the next use.
    const back = await startMcpHttpServer({ token: TOKEN, port: Number(new URL(other.url).port) });
    expect(await callOn(manager)("mcp.docs.echo", { text: "three" })).toMatchObject({ output: "remote: three" });
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 1 });
    await back.close();
  });
});
