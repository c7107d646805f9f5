/**
 * Every tool is declared once, with its hints (MCP's annotation names), and the parent
 * decides from what the child's tool.list says, not from a list of names of its own: a
 * read-only tool is retried once after a crash, any other never; a tool with a deadline
 * argument gets that deadline, within the bounds the child announces.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeClient } from "../helpers/toolhost.js";
import { realClient, realWorkspace } from "../helpers/real-toolhost.js";

describe("tool hints", () => {
  it("the real child announces every tool's hints, and shell.exec's deadline bounds from the agent's limits", async () => {
    const workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none",
      SHELL_TIMEOUT_MS: "7000",
      SHELL_MAX_TIMEOUT_MS: "90000",
      ALLOWED_COMMANDS: "ls",
    });
    const { client } = realClient(workspace, "a");
    const tools = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ["file.read", "file.list", "file.grep", "file.glob", "library.search"]) {
      expect(byName.get(name)?.annotations, name).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    }
    expect(byName.get("file.write")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get("file.edit")?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    expect(byName.get("shell.exec")).toMatchObject({
      annotations: { readOnlyHint: false, openWorldHint: false },
      deadline: { argument: "timeout_ms", defaultMs: 7000, maxMs: 90000 },
    });
    expect(tools.filter((tool) => tool.deadline).map((tool) => tool.name)).toEqual(["shell.exec"]);
    const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
    expect(await client.callTool({ name: "shell.exec", args: { command: "ls" }, cwd })).toMatchObject({ ok: true });
  });

  it("a tool the child declares read-only is retried after a crash, whatever its name; a write never", async () => {
    const { client, spawns } = makeClient();
    const read = await client.callTool({ name: "lookup.custom", args: { kill: true, exitAfterMs: 20 } });
    // Killed twice (the first try and the retry): the retry happened, alone, on a new child.
    expect(read).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(spawns).toHaveLength(2);
    const write = await client.callTool({ name: "file.write", args: { kill: true, exitAfterMs: 20 } });
    expect(write).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(spawns).toHaveLength(3);
    // An undeclared tool is not retried either: without hints, nothing is assumed.
    await client.callTool({ name: "unknown.tool", args: { kill: true, exitAfterMs: 20 } });
    expect(spawns).toHaveLength(4);
  });

  it("the deadline argument a tool declares is honoured within its bounds; other tools get the call deadline", async () => {
    const { client } = makeClient({ callTimeoutMs: 300 });
    expect(await client.callTool({ name: "shell.exec", args: { sleepMs: 600, timeout_ms: 2_000 } })).toMatchObject({
      ok: true,
    });
    expect(await client.callTool({ name: "file.read", args: { sleepMs: 600 } })).toMatchObject({
      ok: false,
      error: { code: "TIMEOUT" },
    });
  });
});
