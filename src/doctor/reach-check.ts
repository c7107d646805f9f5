/**
 * What the agents reach beyond their folders, checked as `laoding start` will check it:
 * every MCP server's `$NAME`s resolve, its command is installed, a remote server's host
 * is reachable by the agent's network setting, and the EGRESS_HOSTS file reads. One line
 * per agent with servers or an allow list, one per problem.
 */
import { allowListOf } from "../config/agent-reach.js";
import type { AgentDefinition } from "../config/agents.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { egressHosts, resolveServers } from "../runtime/agent-reach.js";
import { failed, failedFromError, passed, type CheckResult } from "./check-result.js";

export async function checkReach(
  loaded: LoadedConfig,
  layout: RuntimeLayout,
  agents: AgentDefinition[],
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const reaching = agents.filter(
    (agent) => Object.keys(agent.mcpServers).length > 0 || allowListOf(agent.network) !== undefined,
  );
  if (reaching.length === 0)
    return [passed("reach", "network and MCP servers", "no agent has an allow list or MCP servers")];
  if (reaching.some((agent) => allowListOf(agent.network) !== undefined) || layout.egressHostsFile) {
    try {
      const hosts = await egressHosts(layout);
      results.push(
        passed(
          "reach:egress-hosts",
          "EGRESS_HOSTS",
          layout.egressHostsFile ? `${hosts.size} names mapped` : "not set (DNS only)",
        ),
      );
    } catch (error) {
      results.push(
        failedFromError("reach:egress-hosts", "EGRESS_HOSTS", error, "Fix the file's line, or unset EGRESS_HOSTS"),
      );
    }
  }
  for (const agent of reaching) {
    const id = `reach:${agent.id}`;
    const title = `network and MCP servers of agent ${agent.id}`;
    let warnings: string[];
    try {
      ({ warnings } = resolveServers({
        config: loaded.config,
        layout,
        agents: [agent],
        lookup: (name) => loaded.declaredValue(name),
      }));
    } catch (error) {
      results.push(failedFromError(id, title, error, `Set the variable in ${layout.envFile}`));
      continue;
    }
    if (warnings.length === 0) {
      const allow = allowListOf(agent.network);
      const servers = Object.keys(agent.mcpServers);
      results.push(
        passed(
          id,
          title,
          [
            allow ? `allow list of ${allow.length}` : agent.network === true ? "the host's network" : "no network",
            servers.length > 0 ? `MCP servers ${servers.join(", ")}` : "no MCP servers",
          ].join("; "),
        ),
      );
    }
    for (const warning of warnings)
      results.push(failed(id, title, warning, "Then try it with `laoding mcp test <agent> <server>` (docs/mcp.md)"));
  }
  return results;
}
