/**
 * Which of the agent's MCP tools one request offers. Every MCP server can bring dozens of
 * tools, and each costs schema bytes in every request: at most `max` are offered, those
 * the routed skills name in `allowed-tools` first (a skill that says `mcp.github.*` gets
 * GitHub's tools), then the rest in the order the servers list them. Built-in tools are
 * always offered and not counted.
 */
import type { ToolInfo } from "../../toolhost/protocol.js";

export const MCP_TOOL_PREFIX = "mcp.";

/** `mcp.github.*` or an exact name; `*` matches any run of characters. */
function patternMatcher(pattern: string): (name: string) => boolean {
  if (!pattern.includes("*")) return (name) => name === pattern;
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (name) => regex.test(name);
}

export function shortlistTools(
  tools: readonly ToolInfo[],
  allowedByRoutedSkills: readonly string[],
  max: number,
): { offered: ToolInfo[]; left: number } {
  const builtIn = tools.filter((tool) => !tool.name.startsWith(MCP_TOOL_PREFIX));
  const mcp = tools.filter((tool) => tool.name.startsWith(MCP_TOOL_PREFIX));
  const matchers = allowedByRoutedSkills.map(patternMatcher);
  const named = mcp.filter((tool) => matchers.some((matches) => matches(tool.name)));
  const rest = mcp.filter((tool) => !named.includes(tool));
  const chosen = [...named, ...rest].slice(0, max);
  // Listed in the servers' order, whatever put them on the list.
  const offered = mcp.filter((tool) => chosen.includes(tool));
  return { offered: [...builtIn, ...offered], left: mcp.length - offered.length };
}
