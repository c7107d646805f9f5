/** Step: the agent's toolhost tools, named as the model may call them, and the bot's own report_gap. */
import { VARIABLES } from "../../config/variables.js";
import type { ToolhostClient } from "../../toolhost/client/toolhost-client.js";
import type { ToolInfo } from "../../toolhost/protocol.js";
import { REPORT_GAP_SPEC, REPORT_GAP_TOOL } from "../react/report-gap.js";
import { toolNameMap } from "../react/tool-names.js";
import type { RouteDecision } from "../routing/route-message.js";
import { shortlistTools } from "./tool-shortlist.js";
import type { TurnContext, TurnTools } from "./turn-context.js";
import { recordTurnGap } from "./turn-gaps.js";

const DEFAULT_MCP_MAX_TOOLS = Number(VARIABLES.MCP_MAX_TOOLS_PER_AGENT.defaultValue);

/**
 * The agent's tools as the model sees them (its MCP servers' shortlisted: tool-shortlist.ts),
 * then report_gap, which every request offers (no toolhost tool takes its name); only
 * report_gap (and an environment gap) when the toolhost is down.
 */
export async function listTurnTools(
  turn: TurnContext,
  client: ToolhostClient,
  route: RouteDecision,
  allowedByRoutedSkills: readonly string[] = [],
): Promise<TurnTools> {
  try {
    // Asked afresh each turn when MCP servers may have changed their tools since.
    const listed = await client.listTools({ refresh: Object.keys(turn.agent.mcpServers).length > 0 });
    const { offered: tools, left } = shortlistTools(
      listed,
      allowedByRoutedSkills,
      turn.env.options.settings.mcpMaxTools ?? DEFAULT_MCP_MAX_TOOLS,
    );
    if (left > 0) turn.log.debug({ left }, "MCP tools over MCP_MAX_TOOLS_PER_AGENT left out of this request");
    const notes = await mcpNotes(turn, client, left);
    const names = toolNameMap(
      tools.map((tool) => tool.name),
      [REPORT_GAP_TOOL],
    );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    return {
      ...(notes ? { notes } : {}),
      names,
      specs: [
        ...[...names].map(([modelName, name]) => {
          const tool = byName.get(name) as ToolInfo;
          return { name: modelName, description: tool.description, parameters: tool.inputSchema };
        }),
        REPORT_GAP_SPEC,
      ],
    };
  } catch (error) {
    turn.log.error({ err: error }, "tools unavailable; answering without them");
    await recordTurnGap(turn, route, {
      reason: "tool_failure",
      tool: "tool.list",
      errorCode: "TOOLHOST_UNAVAILABLE",
      detail: (error as Error).message,
    });
    return { specs: [REPORT_GAP_SPEC], names: new Map() };
  }
}

/** The agent's MCP servers that are not running now (one sentence each in `/context`); never fails the turn. */
async function mcpNotes(turn: TurnContext, client: ToolhostClient, left: number): Promise<TurnTools["notes"]> {
  if (Object.keys(turn.agent.mcpServers).length === 0) return undefined;
  try {
    const status = await client.mcpStatus();
    const mcpUnavailable = (status?.servers ?? [])
      .filter((server) => server.state !== "running")
      .map((server) => ({ server: server.name, state: server.state, reason: server.lastError ?? "-" }));
    return { mcpUnavailable, mcpLeftOut: left };
  } catch (error) {
    turn.log.warn({ err: error }, "cannot ask the toolhost for its MCP servers' state");
    return undefined;
  }
}
