/**
 * `laoding toolhost --agent A --mcp` against the MCP SDK's own client, over stdio: the
 * real CLI, the real sandboxed child, the real database. What an MCP client (Claude
 * Desktop, the MCP Inspector) would do: list, call, get structured errors, cancel.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_ENTRY, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { livePids, waitFor } from "../helpers/toolhost.js";

let workspace: RealWorkspace;
let client: Client;

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "auto", ALLOWED_COMMANDS: "ls,sleep,echo", LOG_LEVEL: "error" });
  client = new Client({ name: "laoding-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      CLI_ENTRY,
      "toolhost",
      "--agent",
      "a",
      "--mcp",
      "--session",
      "probe",
      "--workspace",
      workspace.workspaceDir,
    ],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    stderr: "pipe",
  });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
});

describe("MCP mode", () => {
  it("lists the agent's tools with their schemas and hints", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining([
        "file.read",
        "file.write",
        "file.edit",
        "file.list",
        "file.grep",
        "file.glob",
        "shell.exec",
      ]),
    );
    expect(byName.get("file.read")).toMatchObject({
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
    expect(byName.get("shell.exec")?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
    });
  });

  it("calls tools in the agent's session folder, and every call leaves an audit row", async () => {
    const written = await client.callTool({
      name: "file.write",
      arguments: { path: "hello.md", content: "hi from MCP\n" },
    });
    expect(written.isError).toBeFalsy();
    const read = await client.callTool({ name: "file.read", arguments: { path: "hello.md" } });
    expect(read).toMatchObject({ content: [{ type: "text", text: "hi from MCP\n" }] });
    const listed = await client.callTool({ name: "shell.exec", arguments: { command: "ls" } });
    expect(listed).toMatchObject({ content: [{ type: "text", text: expect.stringContaining("hello.md") }] });
    // Each row is committed before the MCP client gets its result: read at once, from another process.
    const lastRows = () => {
      const db = new Database(workspace.layout.databaseFile, { readonly: true });
      try {
        return (
          db.prepare("SELECT tool, ok FROM tool_calls WHERE agent_id = 'a' ORDER BY id").all() as Array<{
            tool: string;
            ok: number;
          }>
        ).slice(-3);
      } finally {
        db.close();
      }
    };
    expect(lastRows()).toEqual([
      { tool: "file.write", ok: 1 },
      { tool: "file.read", ok: 1 },
      { tool: "shell.exec", ok: 1 },
    ]);
  });

  it("a tool failure is an isError result with the code as structured content; the sandbox holds", async () => {
    const outside = await client.callTool({
      name: "file.read",
      arguments: { path: join(workspace.layout.agentTrees("b").workTree, "x.md") },
    });
    expect(outside).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringMatching(/^ERROR_CODE=PATH_NOT_ALLOWED; TOOL=file.read; REASON=/) }],
      structuredContent: { error: { code: "PATH_NOT_ALLOWED", tool: "file.read" } },
    });
    const refused = await client.callTool({ name: "shell.exec", arguments: { command: "rm -rf /" } });
    expect(refused).toMatchObject({ isError: true, structuredContent: { error: { code: "COMMAND_NOT_ALLOWED" } } });
    const badArgs = await client.callTool({ name: "file.read", arguments: { nope: 1 } });
    expect(badArgs).toMatchObject({ isError: true, structuredContent: { error: { code: "INVALID_ARGS" } } });
  });

  it("a cancelled call stops its command in the child", async () => {
    const controller = new AbortController();
    const call = client.callTool({ name: "shell.exec", arguments: { command: "sleep 37" } }, undefined, {
      signal: controller.signal,
    });
    await waitFor(() => livePids({ pattern: /^sleep 37/ }).length > 0, 20_000, "the command to start");
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => livePids({ pattern: /^sleep 37/ }).length === 0, 10_000, "the command to be killed");
    // The server goes on serving after a cancellation.
    expect(await client.callTool({ name: "shell.exec", arguments: { command: "echo still here" } })).toMatchObject({
      content: [{ text: "still here\n" }],
    });
  });

  it("a client that writes its requests and closes its input still gets every answer, then the server exits", () => {
    const input = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]
      .map((message) => JSON.stringify(message))
      .join("\n");
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", CLI_ENTRY, "toolhost", "--agent", "b", "--mcp", "--workspace", workspace.workspaceDir],
      { input: `${input}\n`, encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status).toBe(0);
    const answers = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: number; result: { tools?: unknown[] } });
    expect(answers.map((answer) => answer.id)).toEqual([1, 2]);
    expect(answers[1]?.result.tools?.length).toBeGreaterThan(5);
  }, 60_000);
});
