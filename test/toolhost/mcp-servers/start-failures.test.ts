/**
 * Servers that cannot start: each is one warning naming it and why, a state and a last
 * error in the status, never a thrown error, and their tools are simply absent.
 */
import { describe, expect, it } from "vitest";
import { mcpServerStatusSchema } from "../../../src/toolhost/protocol.js";
import { waitFor } from "../../helpers/toolhost.js";
import { callOn, fakeStdio, makeManager, processesIn, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

describe("MCP servers that cannot start", SLOW_TEST, () => {
  it("garbage on stdout stops the server for good with a clear line; a missing command is named; an exit at start gives its code and stderr", async () => {
    let now = 5_000;
    const { manager, warnings, logs, workTree } = makeManager({ clock: { now: () => now } });
    manager.configure({
      servers: [
        fakeStdio({ name: "noisy", flags: ["--garbage"] }),
        { name: "missing", transport: "stdio", command: "laoding-no-such-command", args: [], env: {} },
        fakeStdio({ name: "quitter", flags: ["--exit-at-start=4"] }),
      ],
      ...TIMEOUTS,
    });
    expect(await manager.tools()).toEqual([]);
    const status = new Map(manager.status().map((server) => [server.name, server]));
    expect(status.get("noisy")).toMatchObject({
      state: "failed",
      lastError: expect.stringMatching(/^printed something that is not MCP on stdout \(.*Welcome/),
    });
    expect(status.get("missing")).toMatchObject({
      state: "backoff",
      lastError: "command not found: laoding-no-such-command",
    });
    expect(status.get("quitter")).toMatchObject({
      state: "backoff",
      lastError:
        "exited with code 4 before it answered; stderr: fake MCP server: refusing to start (asked to by --exit-at-start)",
    });
    expect(warnings().sort()).toEqual([
      "MCP server missing failed to start: command not found: laoding-no-such-command",
      "MCP server quitter failed to start: exited with code 4 before it answered; stderr: fake MCP server: refusing to start (asked to by --exit-at-start)",
      "noisy printed something that is not MCP on stdout; stopped",
    ]);
    await waitFor(() => processesIn(workTree).length === 0, 3_000, "the noisy server to stop");

    // Tried again after the delay (in the background): the same failure is not a new
    // warning; a failed server is not tried again.
    now += 60_000;
    expect(await manager.tools()).toEqual([]);
    await waitFor(
      () => manager.status().every((server) => server.state !== "starting"),
      10_000,
      "the restarts to fail again",
    );
    expect(warnings()).toHaveLength(3);
    expect(logs.filter((line) => line.level === 20 && /failed to start/.test(line.msg))).toHaveLength(2);
    expect(manager.status().map((server) => [server.name, server.restarts])).toEqual([
      ["noisy", 0],
      ["missing", 1],
      ["quitter", 1],
    ]);
    expect(await callOn(manager)("mcp.noisy.echo", { text: "hi" })).toMatchObject({
      code: "MCP_UNAVAILABLE",
      reason: expect.stringMatching(/^MCP server noisy is not running \(failed\): printed something that is not MCP/),
    });
    for (const server of manager.status()) expect(mcpServerStatusSchema.safeParse(server).success).toBe(true);
  });

  it("through a launch that wraps the command (as the sandbox's do), a missing command is still named", async () => {
    const { manager } = makeManager({
      // The shape of the sandbox's launch: bash closing inherited descriptors, then exec.
      launchStdio: (server) => ({
        command: "/bin/bash",
        args: ["--noprofile", "--norc", "-c", 'exec "$@"', "laoding-fd-closer", server.command, ...server.args],
        env: server.env,
        cwd: server.cwd,
      }),
    });
    manager.configure({
      servers: [{ name: "missing", transport: "stdio", command: "laoding-no-such-command", args: [], env: {} }],
      ...TIMEOUTS,
    });
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ lastError: "command not found: laoding-no-such-command" });
  });

  it("a cwd outside the working tree fails for good, before anything is spawned", async () => {
    const { manager } = makeManager();
    manager.configure({ servers: [fakeStdio({ cwd: "/tmp" })], ...TIMEOUTS });
    expect(await manager.tools()).toEqual([]);
    expect(manager.status()[0]).toMatchObject({
      state: "failed",
      lastError: "its cwd /tmp is outside the agent's working tree",
    });
  });
});
