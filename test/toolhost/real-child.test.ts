/**
 * Protocol conformance and resilience against the real child (`laoding toolhost`).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import { BoundedMessageReader } from "../../src/toolhost/bounded-reader.js";
import { frameText } from "../../src/toolhost/framed-writer.js";
import { ERROR_CODES, PROTOCOL_VERSION, formatFailure, type ToolResult } from "../../src/toolhost/protocol.js";
import { CLI_ENTRY, giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { FIXTURE_CHILD, isAlive, livePids, makeClient, waitFor } from "../helpers/toolhost.js";

let workspace: RealWorkspace;
beforeAll(async () => {
  // Unjailed, so the child is the process the supervisor started (its pid, its environment); its own uid
  // range, since none-unsafe finds what a command leaves behind by uid (docs/isolation.md).
  workspace = await realWorkspace({
    TOOLHOST_SANDBOX: "none-unsafe",
    TOOLHOST_UID_BASE: "50000",
    ALLOWED_COMMANDS: "ls,echo,sleep,yes,head,cat,false,true",
    SHELL_TIMEOUT_MS: "5000",
    TOOL_OUTPUT_MAX_BYTES: "4096",
  });
});

function expectFailure(result: ToolResult, code: string): void {
  expect(result.ok ? "ok" : result.error.code, result.ok ? result.output : result.error.reason).toBe(code);
}

describe("protocol conformance (real child)", () => {
  it("ping reports pid, agent, uptime, sandbox and protocol version", async () => {
    const { client, supervisor } = realClient(workspace, "a");
    const info = await client.ping();
    expect(info).toEqual({
      ok: true,
      pid: supervisor.pid,
      agentId: "a",
      uptimeMs: expect.any(Number),
      sandbox: "none",
      protocolVersion: PROTOCOL_VERSION,
    });
  });

  it("the child runs with one malloc arena and V8's small-heap flags, in an environment of its own", async () => {
    const { client, supervisor } = realClient(workspace, "a");
    await client.ping();
    const environment = readFileSync(`/proc/${supervisor.pid}/environ`, "utf8").split("\0").filter(Boolean);
    expect(environment).toContain("MALLOC_ARENA_MAX=1");
    // Besides what bash (which closes inherited descriptors, then execs Node) sets for itself.
    const names = environment
      .map((entry) => entry.slice(0, entry.indexOf("=")))
      .filter((name) => !["PWD", "SHLVL", "_"].includes(name));
    expect(names.sort()).toEqual(["HOME", "LANG", "LAODING_TOOLHOST_STARTUP", "MALLOC_ARENA_MAX", "PATH", "TMPDIR"]);
    expect(readFileSync(`/proc/${supervisor.pid}/cmdline`, "utf8").split("\0")).toEqual(
      expect.arrayContaining(["--max-semi-space-size=1", "--optimize-for-size", "--single-threaded-gc", "--expose-gc"]),
    );
  });

  it("tool.list lists every tool with a JSON Schema derived from its zod schema", async () => {
    const { client } = realClient(workspace, "a");
    const tools = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "file.read",
      "file.list",
      "file.write",
      "file.edit",
      "file.grep",
      "file.glob",
      "shell.exec",
      "library.search",
      "library.index",
    ]);
    const edit = tools.find((tool) => tool.name === "file.edit");
    expect(edit?.inputSchema).toMatchObject({
      type: "object",
      properties: {
        path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
        replace_all: { type: "boolean" },
      },
      required: ["path", "old_string", "new_string"],
      additionalProperties: false,
    });
  });

  it("answers every tool error code it can produce, as ok:false results", async () => {
    // A 9 MiB write crosses JSON-RPC and zod twice: give a loaded CI machine time for it.
    const { client, supervisor } = realClient(workspace, "a", { callTimeoutMs: 30_000 });
    const cwd = join(workspace.layout.workRoot, "a", "chat-1");
    mkdirSync(join(cwd, "folder"), { recursive: true });
    writeFileSync(join(cwd, "file.txt"), "one\ntwo\n");
    giveToAgent(workspace, "a", cwd);
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd });
    expectFailure(await call("file.read", { path: 42 }), "INVALID_ARGS");
    expectFailure(await call("file.read", { path: "a", extra: 1 }), "INVALID_ARGS");
    expectFailure(await call("file.nope", {}), "UNKNOWN_TOOL");
    expectFailure(await call("file.read", { path: "/etc/hostname" }), "PATH_NOT_ALLOWED");
    expectFailure(await call("file.read", { path: "missing.txt" }), "PATH_NOT_FOUND");
    expectFailure(await call("file.read", { path: "folder" }), "PATH_IS_DIRECTORY");
    expectFailure(await call("file.list", { path: "file.txt" }), "NOT_A_DIRECTORY");
    expectFailure(
      await call("file.write", { path: "big.txt", content: "x".repeat(9 * 1024 * 1024) }),
      "FILE_TOO_LARGE",
    );
    expectFailure(await call("shell.exec", { command: "rm -rf /" }), "COMMAND_NOT_ALLOWED");
    expectFailure(await call("shell.exec", { command: "sleep 5", timeout_ms: 200 }), "TIMEOUT");
    expectFailure(await call("shell.exec", { command: "false" }), "EXIT_NONZERO");
    const crash = client.callTool({ name: "shell.exec", args: { command: "sleep 31.4" }, cwd });
    await waitFor(() => livePids({ pattern: /sleep 31\.4/ }).length > 0, 5_000, "the command to start");
    process.kill(supervisor.pid as number, "SIGKILL");
    expectFailure(await crash, "TOOLHOST_CRASHED");
    // The command ran in a process group of its own: the parent ends it for the dead child.
    await waitFor(() => livePids({ pattern: /sleep 31\.4/ }).length === 0, 2_000, "the orphaned command to be killed");
    await supervisor.stop();
    expectFailure(await call("file.read", { path: "file.txt" }), "TOOLHOST_UNAVAILABLE");
    const covered = [
      "INVALID_ARGS",
      "UNKNOWN_TOOL",
      "PATH_NOT_ALLOWED",
      "PATH_NOT_FOUND",
      "PATH_IS_DIRECTORY",
      "NOT_A_DIRECTORY",
      "FILE_TOO_LARGE",
      "COMMAND_NOT_ALLOWED",
      "TIMEOUT",
      "EXIT_NONZERO",
      "TOOLHOST_CRASHED",
      "TOOLHOST_UNAVAILABLE",
    ];
    // The rest come from parts this fixture child does not have, each covered where it lives:
    // INTERNAL (a protocol fault) in resilience.test.ts, the egress codes in net/ and
    // web-fetch*.test.ts and test/reach/, the MCP codes in mcp-servers/.
    expect(ERROR_CODES.filter((code) => !covered.includes(code))).toEqual([
      "NETWORK_REFUSED",
      "NETWORK_FAILED",
      "UNSUPPORTED_CONTENT",
      "MCP_UNAVAILABLE",
      "MCP_TOOL_ERROR",
      "INTERNAL",
    ]);
  });

  it("turns a failure into the one-line observation the model reads", () => {
    expect(formatFailure({ code: "PATH_NOT_FOUND", tool: "file.read", reason: "x.txt does not\nexist" })).toBe(
      "ERROR_CODE=PATH_NOT_FOUND; TOOL=file.read; REASON=x.txt does not exist",
    );
  });

  it("protocol faults are JSON-RPC errors: unknown method, invalid params", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        import.meta.resolve("tsx"),
        CLI_ENTRY,
        "toolhost",
        "--agent",
        "a",
        "--workspace",
        workspace.workspaceDir,
      ],
      {
        stdio: ["pipe", "pipe", "ignore"],
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    const connection = createMessageConnection(
      new BoundedMessageReader(child.stdout, 1 << 20),
      new StreamMessageWriter(child.stdin),
    );
    connection.listen();
    await expect(connection.sendRequest("tool.nope", {})).rejects.toMatchObject({ code: -32601 });
    await expect(connection.sendRequest("tool.call", { name: "file.read" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/args/),
    });
    await expect(connection.sendRequest("ping", { extra: true })).rejects.toMatchObject({ code: -32602 });
    expect(
      await connection.sendRequest("tool.call", { name: "file.read", args: { path: "/etc/passwd" } }),
    ).toMatchObject({ ok: false, error: { code: "PATH_NOT_ALLOWED" } });
    connection.dispose();
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
  });

  it("by hand: requests piped in with the input closed right after still get their answers, then the child exits 0", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        import.meta.resolve("tsx"),
        CLI_ENTRY,
        "toolhost",
        "--agent",
        "a",
        "--workspace",
        workspace.workspaceDir,
      ],
      {
        stdio: ["pipe", "pipe", "ignore"],
        env: { PATH: process.env.PATH ?? "" },
      },
    );
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stdin.end(
      Buffer.concat([
        Buffer.from(frameText({ jsonrpc: "2.0", id: 1, method: "ping", params: {} } as never)),
        Buffer.from(
          frameText({
            jsonrpc: "2.0",
            id: 2,
            method: "tool.call",
            params: { name: "file.list", args: { path: "." } },
          } as never),
        ),
      ]),
    );
    const code = await new Promise((resolve) => child.once("exit", resolve));
    const text = Buffer.concat(chunks).toString("utf8");
    expect(code).toBe(0);
    expect(text).toMatch(/"id":1,"result":\{"ok":true,"pid":/);
    expect(text).toMatch(/"id":2,"result":\{"ok":true,"output":/);
  });

  it("a cwd outside the agent's working tree is refused; a new session folder is created", async () => {
    const { client } = realClient(workspace, "a");
    expectFailure(
      await client.callTool({ name: "file.list", args: { path: "." }, cwd: join(workspace.layout.workRoot, "b") }),
      "PATH_NOT_ALLOWED",
    );
    const fresh = await client.callTool({
      name: "file.write",
      args: { path: "note.md", content: "hi" },
      cwd: join(workspace.layout.workRoot, "a", "telegram-42"),
    });
    expect(fresh).toMatchObject({ ok: true, output: "created note.md (2 bytes)" });
    const { readlinkSync } = await import("node:fs");
    expect(readlinkSync(join(workspace.layout.workRoot, "a", "telegram-42", "团队经验"))).toBe(
      workspace.layout.agentTrees("a").experienceDir,
    );
  });
  it("a chat folder swapped for a link between calls: path tools check each path on their own, shell.exec resolves the folder afresh", async () => {
    const { client } = realClient(workspace, "a");
    const chat = join(workspace.layout.workRoot, "a", "chat-swapped");
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd: chat });
    expect(await call("file.write", { path: "note.md", content: "mine" })).toMatchObject({ ok: true });
    expect(await call("file.read", { path: "note.md" })).toMatchObject({ ok: true, output: "mine" });
    // Readable by anyone: only the path sandbox stands between the agent and this file.
    const outside = tempDir("laoding-outside-");
    chmodSync(outside, 0o755);
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET\n", { mode: 0o644 });
    renameSync(chat, `${chat}.old`);
    symlinkSync(outside, chat);
    expectFailure(await call("file.read", { path: "secret.txt" }), "PATH_NOT_ALLOWED");
    expectFailure(await call("file.list", { path: "." }), "PATH_NOT_ALLOWED");
    expectFailure(await call("shell.exec", { command: "cat secret.txt" }), "PATH_NOT_ALLOWED");
    // Gone altogether: a shell call makes the folder again, link and all.
    rmSync(chat);
    expect(await call("shell.exec", { command: "ls -A" })).toMatchObject({ ok: true, output: "团队经验\n" });
  });
  it("a chat folder deleted and made again by a write gets its link back when next resolved; a small read after a large one holds only its own bytes", async () => {
    const { client } = realClient(workspace, "a");
    const chat = join(workspace.layout.workRoot, "a", "chat-remade");
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, args, cwd: chat });
    expect(
      await call("file.write", { path: "big.txt", content: `${"long line of text\n".repeat(5_000)}` }),
    ).toMatchObject({ ok: true });
    expect(await call("file.write", { path: "small.txt", content: "hi\n" })).toMatchObject({ ok: true });
    expect(await call("file.read", { path: "big.txt" })).toMatchObject({ ok: true, truncated: true });
    expect(await call("file.read", { path: "small.txt" })).toEqual({ ok: true, output: "hi\n", truncated: false });
    rmSync(chat, { recursive: true });
    // Within the second its resolution is reused: the write makes the folder again on its own.
    expect(await call("file.write", { path: "again.md", content: "x" })).toMatchObject({ ok: true });
    expect(await call("shell.exec", { command: "ls -A" })).toMatchObject({ ok: true, output: "again.md\n团队经验\n" });
  });
});

describe("real child resilience", () => {
  it("10. a stray console.log in a guarded child does not corrupt the stream", async () => {
    const { spawn: spawnChild } = await import("node:child_process");
    const { client } = makeClient({
      spawn: () =>
        spawnChild(process.execPath, ["--import", import.meta.resolve("tsx"), FIXTURE_CHILD, "noisy-guarded"], {
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
        }),
    });
    for (let index = 0; index < 20; index += 1)
      expect((await client.callTool({ name: "file.read", args: { index } })).ok).toBe(true);
  });

  it("1. an unguarded noisy child is a protocol error: the call fails and the child is replaced", async () => {
    const { spawn: spawnChild } = await import("node:child_process");
    const { client, spawns } = makeClient({
      spawn: () =>
        spawnChild(process.execPath, [FIXTURE_CHILD, "noisy-unguarded"], {
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
        }),
    });
    const result = await client.callTool({ name: "file.read", args: {} });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "TOOLHOST_UNAVAILABLE",
        reason: expect.stringMatching(
          /did not start: protocol error from the toolhost: unexpected header "stray output/,
        ),
      },
    });
    await waitFor(() => spawns.length >= 2, 5_000, "the broken child to be replaced");
  });

  it("7. a hung tool is killed at its deadline with its process group; other calls complete", async () => {
    const { client } = realClient(workspace, "a", { concurrency: 2 });
    const hung = client.callTool({ name: "shell.exec", args: { command: "sleep 41.7", timeout_ms: 300 } });
    const other = client.callTool({ name: "shell.exec", args: { command: "echo fine" } });
    expect(await other).toMatchObject({ ok: true, output: "fine\n" });
    expectFailure(await hung, "TIMEOUT");
    expect(livePids({ pattern: /sleep 41\.7/ })).toEqual([]);
  });

  it("13. huge output is capped to head + tail with a marker; the command is killed", async () => {
    const { client } = realClient(workspace, "a");
    const result = await client.callTool({ name: "shell.exec", args: { command: "yes laoding" } });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(4096 + 200);
    expect(result.output).toMatch(/^laoding\nlaoding\n[\s\S]*…\[\d+ bytes truncated\]…[\s\S]*laoding\n/);
    expect(livePids({ pattern: /yes laoding/ })).toEqual([]);
  });

  it("12. when the parent is killed the child exits within about a second, taking its tools along", async () => {
    const parent = spawn(
      process.execPath,
      [
        "--import",
        import.meta.resolve("tsx"),
        join(REAL_REPO_ROOT, "test/fixtures/toolhost/parent-that-dies.ts"),
        workspace.workspaceDir,
        workspace.repoRoot,
      ],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const childPid = await new Promise<number>((resolve, reject) => {
      parent.stdout.on("data", (chunk: Buffer) => {
        const match = /child (\d+) running/.exec(chunk.toString());
        if (match) resolve(Number(match[1]));
      });
      parent.once("exit", () => reject(new Error("parent exited early")));
    });
    await waitFor(() => livePids({ pattern: /sleep 43\.21/ }).length > 0, 5_000, "the tool process");
    parent.kill("SIGKILL");
    await waitFor(() => !isAlive(childPid), 3_000, "the orphaned child to exit");
    await waitFor(() => livePids({ pattern: /sleep 43\.21/ }).length === 0, 2_000, "the tool process to die");
  });

  it("14. a graceful stop ends the real child quickly and never restarts it", async () => {
    const { client, supervisor, spawns } = realClient(workspace, "a");
    await client.ping();
    const pid = supervisor.pid;
    await supervisor.stop();
    expect(isAlive(pid)).toBe(false);
    expect(spawns).toHaveLength(1);
  });
});
