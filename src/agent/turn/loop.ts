/** Step: the ReAct loop over the turn's tools (and report_gap); every tool call and result is stored as scratch. */
import type { ChatMessage } from "../../llm/chat-model.js";
import type { Store } from "../../store/store.js";
import type { ToolhostClient } from "../../toolhost/client/toolhost-client.js";
import { runReactLoop, type ReactLoopResult } from "../react/react-loop.js";
import { REPORT_GAP_TOOL } from "../react/report-gap.js";
import { createToolExecutor } from "../react/tool-executor.js";
import type { RouteDecision } from "../routing/route-message.js";
import type { TurnContext, TurnTools } from "./turn-context.js";
import { reportGapHandler, trackToolFailures } from "./turn-gaps.js";

export type LoopParts = {
  route: RouteDecision;
  client: ToolhostClient;
  tools: TurnTools;
  cwd: string;
  messages: ChatMessage[];
};

/**
 * The loop; `report_gap` is answered here, the rest by the toolhost. After a final answer
 * a tool failure nothing recovered from is the turn's gap (turn-gaps.ts).
 */
export async function runTurnLoop(turn: TurnContext, parts: LoopParts): Promise<ReactLoopResult> {
  const { store, settings } = turn.env.options;
  const failures = trackToolFailures(turn, parts.route);
  const reportGap = reportGapHandler(turn, parts.route);
  const toolhostCall = createToolExecutor({
    client: parts.client,
    names: parts.tools.names,
    cwd: parts.cwd,
    traceId: turn.traceId,
    sessionId: turn.sessionId,
    signal: turn.signal,
    onCall: (tool) => turn.control.onProgress?.({ state: "tool", tool }),
    onFailure: (report) => failures.onFailure(report),
  });
  const result = await runReactLoop({
    model: turn.model,
    messages: parts.messages,
    tools: parts.tools.specs,
    executeTool: async (call) =>
      call.name === REPORT_GAP_TOOL ? reportGap(call) : failures.observed(await toolhostCall(call)),
    maxSteps: settings.maxSteps,
    traceId: turn.traceId,
    agentId: turn.agent.id,
    signal: turn.signal,
    onMessage: (chatMessage) => storeScratch(store, turn.sessionId, turn.traceId, chatMessage),
  });
  if (result.stop === "final") await failures.settle();
  return result;
}

/** The loop's working messages (tool calls and their results), kept under the turn's trace. */
async function storeScratch(store: Store, sessionId: number, traceId: string, message: ChatMessage): Promise<void> {
  if (message.role === "assistant" && message.toolCalls && message.toolCalls.length > 0) {
    await store.messages.append({
      sessionId,
      role: "assistant",
      kind: "scratch",
      content: message.content ?? "",
      toolCalls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.argumentsText })),
      traceId,
    });
  } else if (message.role === "tool") {
    await store.messages.append({
      sessionId,
      role: "tool",
      kind: "scratch",
      content: message.content,
      toolCallId: message.toolCallId,
      traceId,
    });
  }
}
