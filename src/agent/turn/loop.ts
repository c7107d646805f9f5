/** Step: the ReAct loop over the turn's tools; every tool call and result is stored as scratch. */
import type { ChatMessage } from "../../llm/chat-model.js";
import type { Store } from "../../store/store.js";
import type { ToolhostClient } from "../../toolhost/client/toolhost-client.js";
import { runReactLoop, type ReactLoopResult } from "../react/react-loop.js";
import { createToolExecutor } from "../react/tool-executor.js";
import type { RouteDecision } from "../routing/route-message.js";
import type { TurnContext, TurnTools } from "./turn-context.js";

export type LoopParts = {
  route: RouteDecision;
  client: ToolhostClient;
  tools: TurnTools;
  cwd: string;
  messages: ChatMessage[];
};

export function runTurnLoop(turn: TurnContext, parts: LoopParts): Promise<ReactLoopResult> {
  const { store, settings } = turn.env.options;
  const executeTool = createToolExecutor({
    client: parts.client,
    names: parts.tools.names,
    cwd: parts.cwd,
    traceId: turn.traceId,
    sessionId: turn.sessionId,
    signal: turn.signal,
    onCall: (tool) => turn.control.onProgress?.({ state: "tool", tool }),
    // A call cut short by a cancel says nothing about what the agent can do.
    onFailure: async (report) => {
      if (!turn.signal.aborted)
        await turn.env.recordGap({
          ...turn.gapBase,
          intentKey: parts.route.intentKey,
          reason: report.kind,
          tool: report.tool,
          errorCode: report.code,
          detail: report.reason,
        });
    },
  });
  return runReactLoop({
    model: turn.model,
    messages: parts.messages,
    tools: parts.tools.specs,
    executeTool,
    maxSteps: settings.maxSteps,
    traceId: turn.traceId,
    agentId: turn.agent.id,
    signal: turn.signal,
    onMessage: (chatMessage) => storeScratch(store, turn.sessionId, turn.traceId, chatMessage),
  });
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
