/** Which MCP tools a request offers (MCP_MAX_TOOLS_PER_AGENT, skills' allowed-tools) and the names the model sees. */
import { describe, expect, it } from "vitest";
import { toolNameMap } from "../../src/agent/react/tool-names.js";
import { shortlistTools } from "../../src/agent/turn/tool-shortlist.js";
import type { ToolInfo } from "../../src/toolhost/protocol.js";

const tool = (name: string): ToolInfo => ({
  name,
  description: name,
  inputSchema: { type: "object" },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
const names = (tools: readonly ToolInfo[]) => tools.map((entry) => entry.name);
const listed = [
  tool("file.read"),
  tool("shell.exec"),
  tool("mcp.docs.search"),
  tool("mcp.docs.page"),
  tool("mcp.github.create_issue"),
  tool("mcp.github.list_issues"),
];

describe("shortlistTools", () => {
  it("offers every built-in tool and MCP tools up to the cap, in the servers' order", () => {
    const { offered, left } = shortlistTools(listed, [], 3);
    expect(names(offered)).toEqual([
      "file.read",
      "shell.exec",
      "mcp.docs.search",
      "mcp.docs.page",
      "mcp.github.create_issue",
    ]);
    expect(left).toBe(1);
  });

  it("puts the tools the routed skills name first (wildcards too) when the cap leaves some out", () => {
    expect(names(shortlistTools(listed, ["mcp.github.*"], 2).offered)).toEqual([
      "file.read",
      "shell.exec",
      "mcp.github.create_issue",
      "mcp.github.list_issues",
    ]);
    expect(names(shortlistTools(listed, ["mcp.docs.page", "shell.exec"], 1).offered)).toEqual([
      "file.read",
      "shell.exec",
      "mcp.docs.page",
    ]);
  });

  it("a cap of 0 offers no MCP tool at all", () => {
    expect(names(shortlistTools(listed, ["mcp.*"], 0).offered)).toEqual(["file.read", "shell.exec"]);
  });
});

describe("toolNameMap", () => {
  it("spells names for the API and maps them back", () => {
    expect([...toolNameMap(["file.read", "mcp.github.create_issue"])]).toEqual([
      ["file_read", "file.read"],
      ["mcp_github_create_issue", "mcp.github.create_issue"],
    ]);
  });

  it("gives a numbered name to a tool whose spelling meets an earlier one's, so neither is lost", () => {
    const map = toolNameMap(["mcp.a_b.x", "mcp.a.b_x", "mcp.a.b.x"]);
    expect([...map]).toEqual([
      ["mcp_a_b_x", "mcp.a_b.x"],
      ["mcp_a_b_x_2", "mcp.a.b_x"],
      ["mcp_a_b_x_3", "mcp.a.b.x"],
    ]);
    const long = toolNameMap([`mcp.s.${"a".repeat(70)}`, `mcp.s_${"a".repeat(70)}`]);
    for (const modelName of long.keys()) expect(modelName.length).toBeLessThanOrEqual(64);
    expect(long.size).toBe(2);
  });
});
