/**
 * An agent's MCP stdio server inside the real sandbox (bwrap, and none as root: the
 * jail), started by the real toolhost child as the bot starts it: the SDK fake server is
 * listed and called, runs as the agent's uid, cannot read the other agent's tree, times
 * out, and after a crash comes back on a later use.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { mcpConfigureMethod, mcpStatusMethod } from "../../src/toolhost/protocol.js";
import { giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const FAKES = join(REAL_REPO_ROOT, "test", "fakes");
const TSX = new URL(import.meta.resolve("tsx")).pathname;
const isRoot = process.getuid?.() === 0;
const modes = (["bwrap", "none"] as const).filter((mode) => mode === "bwrap" || isRoot);

describe.each(modes)("an MCP stdio server in %s mode", (mode) => {
  let workspace: RealWorkspace;
  let client: ReturnType<typeof realClient>["client"];
  let bFile: string;

  beforeAll(async () => {
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: mode, ALLOWED_DIRS: FAKES });
    workspace.launches();
    bFile = join(workspace.layout.agentTrees("b").workTree, "b-private.txt");
    writeFileSync(bFile, "b's private notes");
    ({ client } = realClient(workspace, "a", {
      scope: "file",
      callTimeoutMs: 40_000,
      initialize: async (connection) => {
        await connection.request(
          mcpConfigureMethod,
          {
            servers: [
              {
                name: "fake",
                transport: "stdio",
                command: process.execPath,
                args: ["--import", TSX, join(FAKES, "mcp-stdio-server.ts")],
                env: { FAKE_TOKEN: "token-for-the-server" },
              },
            ],
            startTimeoutMs: 30_000,
            callTimeoutMs: 1_500,
          },
          { timeoutMs: 5_000 },
        );
      },
    }));
  }, 60_000);
  afterAll(async () => {
    await client?.supervisor.stop();
  });

  const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, args });

  it("lists the server's tools beside the built-in ones and calls them", async () => {
    const names = (await client.listTools({ refresh: true })).map((tool) => tool.name);
    expect(names).toContain("file.read");
    expect(names).toEqual(expect.arrayContaining(["mcp.fake.echo", "mcp.fake.read_file", "mcp.fake.crash"]));
    expect(await call("mcp.fake.echo", { text: "inside the jail" })).toMatchObject({ ok: true });
    expect(await call("mcp.fake.env", { name: "FAKE_TOKEN" })).toMatchObject({
      ok: true,
      output: expect.stringMatching(/\bset\b/),
    });
  }, 60_000);

  it("runs as the agent's uid and cannot read the other agent's tree", async () => {
    const status = await call("mcp.fake.read_file", { path: "/proc/self/status" });
    expect(status.ok).toBe(true);
    const uid = Number(/\nUid:\s+(\d+)/.exec(status.ok ? status.output : "")?.[1]);
    expect(uid).toBe(workspace.launches().agents.get("a")?.uid ?? process.getuid?.());
    const stolen = await call("mcp.fake.read_file", { path: bFile });
    expect(stolen.ok).toBe(false);
    expect(JSON.stringify(stolen)).not.toContain("b's private notes");
  });

  it("works in a private home, so nothing the agent writes can steer it", async () => {
    // What an agent would plant to run its code inside the server, next to its token.
    const workTree = workspace.layout.agentTrees("a").workTree;
    writeFileSync(join(workTree, ".npmrc"), "node-options=--require=./steal.cjs\n");
    giveToAgent(workspace, "a", join(workTree, ".npmrc"));
    const environ = await call("mcp.fake.read_file", { path: "/proc/self/environ" });
    expect(environ.ok).toBe(true);
    const variables = (environ.ok ? environ.output : "").split("\0");
    expect(variables).toContain("HOME=/tmp/mcp-home");
    // Its folder is that home, not the agent's working tree: the planted file is not there.
    const planted = await call("mcp.fake.read_file", { path: ".npmrc" });
    expect(planted.ok).toBe(false);
    // And the agent's commands do not see the server's home.
    const listing = await call("shell.exec", { command: "ls -a /tmp/mcp-home" });
    expect(listing.ok).toBe(false);
  });

  it("times out a call that takes longer than its deadline", async () => {
    const slow = await call("mcp.fake.sleep", { ms: 20_000 });
    expect(slow).toMatchObject({ ok: false, error: { code: "TIMEOUT" } });
    // The server is still there for the next call.
    expect(await call("mcp.fake.echo", { text: "after the timeout" })).toMatchObject({ ok: true });
  });

  it("comes back after a crash, on a later use once its back-off has passed", async () => {
    const crashed = await call("mcp.fake.crash");
    expect(crashed.ok).toBe(false);
    await vi.waitFor(
      async () => {
        await client.listTools({ refresh: true });
        expect(await call("mcp.fake.echo", { text: "back again" })).toMatchObject({ ok: true });
      },
      { timeout: 30_000, interval: 500 },
    );
    const connection = await client.supervisor.ready();
    const { servers } = await connection.request(mcpStatusMethod, {}, { timeoutMs: 5_000 });
    expect(servers[0]).toMatchObject({ name: "fake", state: "running" });
    expect(servers[0]?.restarts).toBeGreaterThanOrEqual(1);
  }, 40_000);
});
