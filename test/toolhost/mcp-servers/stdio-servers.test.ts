/**
 * A real stdio MCP server (test/fakes/mcp-stdio-server.ts, written with the SDK) run by
 * the manager: its tools become the agent's `mcp.<server>.<tool>` tools with the server's
 * descriptions, schemas and hints; calls answer with text (or the placeholders, or the
 * codes the parent knows); tools/list_changed refreshes the list.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../../src/toolhost/tool-error.js";
import type { Tool } from "../../../src/toolhost/tools/define-tool.js";
import { callContext, fakeStdio, makeManager, SLOW_TEST, TIMEOUTS } from "./mcp-setup.js";

const byName = (tools: Tool[]) => new Map(tools.map((tool) => [tool.name, tool]));

async function failureOf(run: () => unknown): Promise<ToolError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error("the call did not fail");
}

// One server for the file (a start takes a second): the tests run in order and the last one adds a tool.
let setup: ReturnType<typeof makeManager>;
const SERVER = fakeStdio({ env: { FAKE_TOKEN: "s3cret-token-value" } });
beforeAll(() => {
  setup = makeManager({ scope: "file" });
  setup.manager.configure({ servers: [SERVER], ...TIMEOUTS });
});

describe("a stdio MCP server's tools", SLOW_TEST, () => {
  it("start lazily, are listed by the agent's names with the server's descriptions, schemas and hints; bad ones are skipped with a warning", async () => {
    const { manager, warnings } = setup;
    expect(manager.status()).toEqual([{ name: "fake", transport: "stdio", state: "idle", tools: [], restarts: 0 }]);

    const tools = byName(await manager.tools());
    expect([...tools.keys()]).toEqual(
      expect.arrayContaining(["mcp.fake.echo", "mcp.fake.read_file", "mcp.fake.crash", "mcp.fake.weird_name_"]),
    );
    expect(tools.get("mcp.fake.echo")).toMatchObject({
      description: "Returns the text it is given.",
      jsonSchema: { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"] },
      hints: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    });
    // Hints the server does not give are MCP's defaults: may write, destroy, repeat, reach out.
    expect(tools.get("mcp.fake.crash")?.hints).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    expect(tools.has("mcp.fake.scalar_input")).toBe(false);
    expect(warnings()).toEqual([
      'MCP server fake: tool "scalar_input" skipped: its input schema is not an object schema ({ "type": "object", ... })',
    ]);
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 0 });
    expect(manager.status()[0]?.tools).toContainEqual({
      name: "mcp.fake.echo",
      description: "Returns the text it is given.",
    });
  });

  it("answer calls: text, structured content as JSON, images as a placeholder, isError as MCP_TOOL_ERROR, env values never shown", async () => {
    const { manager } = setup;
    const tools = byName(await manager.tools());
    const call = (name: string, args: Record<string, unknown> = {}) =>
      tools.get(`mcp.fake.${name}`)?.execute(args, callContext());

    expect(await call("echo", { text: "hello" })).toEqual({ output: "hello", truncated: false });
    expect(await call("structured")).toEqual({ output: '{"answer":42,"items":["a","b"]}', truncated: false });
    expect(await call("image")).toEqual({ output: "[image image/png, 300 bytes, not shown]", truncated: false });
    expect(await call("env", { name: "FAKE_TOKEN" })).toMatchObject({ output: "set" });
    expect(await call("env", { name: "NOT_GIVEN_TO_IT" })).toMatchObject({ output: "unset" });
    // A server that repeats a secret it was given: the model never reads it.
    expect(await call("echo", { text: "token is s3cret-token-value" })).toMatchObject({ output: "token is ***" });

    const failed = await failureOf(() => call("fail", { message: "the repository is archived" }));
    expect(failed).toMatchObject({ code: "MCP_TOOL_ERROR", message: "fake: the repository is archived" });
  });

  it("a call over its deadline is TIMEOUT, and the server keeps serving", async () => {
    const { manager } = setup;
    // The same server with a shorter call deadline: it keeps running, only the deadline changes.
    manager.configure({ servers: [SERVER], ...TIMEOUTS, callTimeoutMs: 300 });
    const tools = byName(await manager.tools());
    const failed = await failureOf(() => tools.get("mcp.fake.sleep")?.execute({ ms: 5_000 }, callContext()));
    expect(failed).toMatchObject({ code: "TIMEOUT", message: "fake did not answer sleep within 300 ms" });
    expect(await tools.get("mcp.fake.echo")?.execute({ text: "still here" }, callContext())).toMatchObject({
      output: "still here",
    });
    // The parent's cancellation (its own deadline) ends the call too.
    const controller = new AbortController();
    const cancelled = failureOf(() =>
      tools.get("mcp.fake.sleep")?.execute({ ms: 100 }, callContext(controller.signal)),
    );
    controller.abort();
    expect(await cancelled).toMatchObject({ code: "TIMEOUT" });
    expect(manager.status()[0]).toMatchObject({ state: "running", restarts: 0 });
    manager.configure({ servers: [SERVER], ...TIMEOUTS });
  });

  it("tools/list_changed refreshes the server's tools: the next list has the new one", async () => {
    const { manager } = setup;
    const before = byName(await manager.tools());
    expect(before.has("mcp.fake.late_tool")).toBe(false);
    await before.get("mcp.fake.add_tool")?.execute({ name: "late tool" }, callContext());
    const after = byName(await manager.tools());
    expect(after.get("mcp.fake.late_tool")?.description).toBe("Added at run time: late tool.");
    expect(await manager.find("mcp.fake.late_tool")).toBe(after.get("mcp.fake.late_tool"));
  });
});
