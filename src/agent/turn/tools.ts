/** Step: the agent's toolhost tools, named as the model may call them. */
import type { ToolhostClient } from "../../toolhost/client/toolhost-client.js";
import { toModelToolName, toolNameMap } from "../react/tool-names.js";
import type { RouteDecision } from "../routing/route-message.js";
import type { TurnContext, TurnTools } from "./turn-context.js";

/** The agent's tools as the model sees them; none (and a gap) when the toolhost is down. */
export async function listTurnTools(
  turn: TurnContext,
  client: ToolhostClient,
  route: RouteDecision,
): Promise<TurnTools> {
  try {
    const tools = await client.listTools();
    return {
      names: toolNameMap(tools.map((tool) => tool.name)),
      specs: tools.map((tool) => ({
        name: toModelToolName(tool.name),
        description: tool.description,
        parameters: tool.inputSchema,
      })),
    };
  } catch (error) {
    turn.log.error({ err: error }, "tools unavailable; answering without them");
    await turn.env.recordGap({
      ...turn.gapBase,
      intentKey: route.intentKey,
      reason: "tool_failure",
      tool: "tool.list",
      errorCode: "TOOLHOST_UNAVAILABLE",
      detail: (error as Error).message,
    });
    return { specs: [], names: new Map() };
  }
}
