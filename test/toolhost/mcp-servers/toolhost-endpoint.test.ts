/**
 * MCP servers through the child's real JSON-RPC endpoint (serveToolhost on in-process
 * streams, the parent side a vscode-jsonrpc connection): the parent configures them,
 * tool.list has their tools after the built-in ones, tool.call reaches them, arguments
 * are checked before the server is called, and a result over the cap is cut with the
 * usual marker. A child without MCP servers answers mcp.status with an empty list.
 */
import { realpathSync } from "node:fs";
import { PassThrough } from "node:stream";
import { pino } from "pino";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc/node";
import { afterEach, describe, expect, it } from "vitest";
import { BoundedMessageReader } from "../../../src/toolhost/bounded-reader.js";
import { FramedMessageWriter } from "../../../src/toolhost/framed-writer.js";
import type { McpServers } from "../../../src/toolhost/mcp-servers/mcp-servers.js";
import { noneLauncher } from "../../../src/toolhost/sandbox/command-launchers.js";
import { PathSandbox } from "../../../src/toolhost/sandbox/path-sandbox.js";
import { serveToolhost } from "../../../src/toolhost/server/toolhost-server.js";
import { createShellRunner } from "../../../src/toolhost/shell/shell-runner.js";
import { DEFAULT_TOOL_LIMITS } from "../../../src/toolhost/tools/define-tool.js";
import { fileReadTool } from "../../../src/toolhost/tools/file-read.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { fakeStdio, makeManager, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

const OUTPUT_MAX_BYTES = 4_096;
const connections: MessageConnection[] = [];
afterEach(() => {
  for (const connection of connections.splice(0)) connection.dispose();
});

/** A child's endpoint serving file.read (and the MCP servers, when given), and the parent's connection to it. */
function child(mcp?: McpServers) {
  const toChild = new PassThrough();
  const toParent = new PassThrough();
  const workTree = realpathSync(tempDir("laoding-mcp-child-"));
  serveToolhost({
    reader: new BoundedMessageReader(toChild, 1 << 20),
    writer: new FramedMessageWriter(toParent, { batch: "none" }),
    agentId: "a",
    tools: [fileReadTool],
    sandbox: new PathSandbox([{ path: workTree, writable: true, label: "working tree" }]),
    workTree,
    limits: {
      ...DEFAULT_TOOL_LIMITS,
      outputMaxBytes: OUTPUT_MAX_BYTES,
      shellTimeoutMs: 5_000,
      shellMaxTimeoutMs: 10_000,
    },
    shell: createShellRunner(
      noneLauncher({ agentId: "a", home: workTree, memoryLimitBytes: 1 << 30, ownerPid: process.pid }),
    ),
    logger: pino({ level: "silent" }),
    ...(mcp ? { mcp } : {}),
  });
  const parent = createMessageConnection(
    new BoundedMessageReader(toParent, 1 << 20),
    new FramedMessageWriter(toChild, { batch: "tick" }),
  );
  parent.listen();
  connections.push(parent);
  const call = (name: string, args: Record<string, unknown>) => parent.sendRequest("tool.call", { name, args });
  return { parent, call };
}

describe("MCP servers through the toolhost endpoint", SLOW_TEST, () => {
  it("configured by the parent, listed after the built-ins, called; bad arguments never reach the server; big results are cut", async () => {
    const { manager } = makeManager();
    const { parent, call } = child(manager);
    expect(await parent.sendRequest("mcp.configure", { servers: [fakeStdio()], ...TIMEOUTS })).toEqual({ ok: true });
    expect(await parent.sendRequest("mcp.status", {})).toEqual({
      servers: [{ name: "fake", transport: "stdio", state: "idle", tools: [], restarts: 0 }],
    });

    const { tools } = (await parent.sendRequest("tool.list", {})) as { tools: { name: string }[] };
    expect(tools[0]?.name).toBe("file.read");
    expect(tools.find((tool) => tool.name === "mcp.fake.echo")).toEqual({
      name: "mcp.fake.echo",
      description: "Returns the text it is given.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", minLength: 1 } },
        required: ["text"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    });

    expect(await call("mcp.fake.echo", { text: "through the child" })).toEqual({
      ok: true,
      output: "through the child",
      truncated: false,
    });
    expect(await call("mcp.fake.echo", {})).toEqual({
      ok: false,
      error: { code: "INVALID_ARGS", tool: "mcp.fake.echo", reason: "`text` is missing" },
    });
    expect(await call("mcp.fake.echo", { text: 5, extra: true })).toEqual({
      ok: false,
      error: {
        code: "INVALID_ARGS",
        tool: "mcp.fake.echo",
        reason: "arguments: unknown field `extra`; `text`: must be string",
      },
    });
    // The server answered one call before this one: the invalid ones never reached it.
    expect(await call("mcp.fake.calls", {})).toMatchObject({ ok: true, output: "1" });

    const big = (await call("mcp.fake.big", { bytes: 100_000 })) as { ok: true; output: string; truncated: boolean };
    expect(big.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(big.output))).toBeLessThanOrEqual(OUTPUT_MAX_BYTES);
    expect(big.output).toMatch(/\n…\[\d+ bytes truncated\]…\n/);

    expect(await call("mcp.fake.nothing", {})).toMatchObject({
      ok: false,
      error: { code: "UNKNOWN_TOOL", reason: expect.stringContaining("the MCP servers' tools: mcp.fake.echo,") },
    });
    expect(await call("mcp.elsewhere.echo", {})).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
    expect(await call("file.read", { path: "missing.txt" })).toMatchObject({
      ok: false,
      error: { code: "PATH_NOT_FOUND" },
    });

    expect(await parent.sendRequest("mcp.test", { server: "fake" })).toMatchObject({
      ok: true,
      tools: expect.arrayContaining([{ name: "mcp.fake.echo", description: "Returns the text it is given." }]),
    });
    expect(await parent.sendRequest("mcp.status", {})).toMatchObject({
      servers: [{ name: "fake", state: "running", restarts: 0 }],
    });
  });

  it("a child without MCP servers: empty status, its built-in list only, a configuration naming servers refused", async () => {
    const { parent } = child();
    expect(await parent.sendRequest("mcp.status", {})).toEqual({ servers: [] });
    expect(await parent.sendRequest("tool.list", {})).toMatchObject({ tools: [{ name: "file.read" }] });
    expect(await parent.sendRequest("mcp.configure", { servers: [], ...TIMEOUTS })).toEqual({ ok: true });
    await expect(parent.sendRequest("mcp.configure", { servers: [fakeStdio()], ...TIMEOUTS })).rejects.toThrow(
      "this toolhost child runs no MCP servers",
    );
    await expect(parent.sendRequest("mcp.configure", { servers: [{ name: "Bad Name" }], ...TIMEOUTS })).rejects.toThrow(
      /invalid params for mcp.configure/,
    );
  });
});
