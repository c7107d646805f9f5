/**
 * One listing of the agent's MCP tools is bounded (LISTING_BUDGET: 256 tools, 2 MiB of
 * schemas and descriptions across all servers): it travels to the parent in one frame,
 * and 16 servers of 1,000 tools of 32 KiB would break it on every turn, built-in tools
 * with it. Beyond the budget tools are left out in server order, each server saying how
 * many once; the status still has all of a server's tools (their descriptions bounded too).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LISTING_BUDGET } from "../../../src/toolhost/mcp-servers/mcp-servers.js";
import type { McpServerConfig } from "../../../src/toolhost/protocol.js";
import { makeManager, TIMEOUTS } from "./mcp-setup.js";
import { startManyToolsServer, type ManyToolsServer } from "./many-tools-server.js";

const servers: Record<string, ManyToolsServer> = {};
beforeAll(async () => {
  servers.a = await startManyToolsServer({ tools: 200 });
  servers.b = await startManyToolsServer({ tools: 100 });
  servers.c = await startManyToolsServer({ tools: 10 });
  // 32 KiB schemas, as large as one tool may be: 80 of them are 2.5 MiB.
  servers.big = await startManyToolsServer({ tools: 80, schemaBytes: 32 * 1024 });
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

const remote = (name: string): McpServerConfig => ({
  name,
  transport: "http",
  url: servers[name]?.url ?? "",
  headers: {},
});

const bytesOf = (tool: { description: string; jsonSchema: unknown }) =>
  Buffer.byteLength(tool.description) + Buffer.byteLength(JSON.stringify(tool.jsonSchema));

describe("the budget of one listing of MCP tools", () => {
  it("at most 256 tools: the first servers keep theirs, each server cut says how many once; the status counts them all", async () => {
    const { manager, warnings } = makeManager({ fetch: globalThis.fetch });
    manager.configure({ servers: [remote("a"), remote("b"), remote("c")], ...TIMEOUTS });
    const listed = await manager.tools();
    expect(listed).toHaveLength(LISTING_BUDGET.tools);
    expect(listed.filter((tool) => tool.name.startsWith("mcp.a.")).length).toBe(200);
    expect(listed.filter((tool) => tool.name.startsWith("mcp.b.")).map((tool) => tool.name)).toEqual(
      Array.from({ length: 56 }, (_, index) => `mcp.b.t${index}`),
    );
    const why = "the agent's list already has 256 MCP tools, the most one listing offers";
    const keep = "servers listed earlier in agents.json keep theirs first";
    expect(warnings()).toEqual([
      `MCP server b: 44 of its 100 tools left out of the agent's tool list: ${why}; ${keep}`,
      `MCP server c: 10 of its 10 tools left out of the agent's tool list: ${why}; ${keep}`,
    ]);
    expect(manager.status().map((server) => [server.name, server.state, server.tools.length])).toEqual([
      ["a", "running", 200],
      ["b", "running", 100],
      ["c", "running", 10],
    ]);
    // The same cut at the next turn is not news.
    expect(await manager.tools()).toHaveLength(LISTING_BUDGET.tools);
    expect(warnings()).toHaveLength(2);
  });

  it("at most 2 MiB of schemas and descriptions: the tools that would pass it are left out, with the reason", async () => {
    const { manager, warnings } = makeManager({ fetch: globalThis.fetch });
    manager.configure({ servers: [remote("big"), remote("c")], ...TIMEOUTS });
    const listed = await manager.tools();
    const bytes = listed.reduce((sum, tool) => sum + bytesOf(tool), 0);
    expect(bytes).toBeLessThanOrEqual(LISTING_BUDGET.bytes);
    // As many as fit: one more of the same size would not.
    expect(bytes + bytesOf(listed[0] as (typeof listed)[0])).toBeGreaterThan(LISTING_BUDGET.bytes);
    expect(listed.every((tool) => tool.name.startsWith("mcp.big."))).toBe(true);
    const why =
      "their schemas and descriptions would take the agent's MCP tools past 2 MiB, the most one listing offers";
    expect(warnings()).toEqual([
      `MCP server big: ${80 - listed.length} of its 80 tools left out of the agent's tool list: ${why}; servers listed earlier in agents.json keep theirs first`,
      `MCP server c: 10 of its 10 tools left out of the agent's tool list: ${why}; servers listed earlier in agents.json keep theirs first`,
    ]);
    expect(manager.status().map((server) => server.tools.length)).toEqual([80, 10]);
  });

  it("the status names every tool; descriptions stop at their budget so it fits its frame too", async () => {
    const { manager } = makeManager({ fetch: globalThis.fetch, statusDescriptionBytes: 30 });
    manager.configure({ servers: [remote("c")], ...TIMEOUTS });
    expect(await manager.tools()).toHaveLength(10);
    // "Tool N." is 7 bytes: four fit in 30.
    expect(manager.status()[0]?.tools).toEqual(
      Array.from({ length: 10 }, (_, index) => ({
        name: `mcp.c.t${index}`,
        description: index < 4 ? `Tool ${index}.` : "",
      })),
    );
  });
});
