/**
 * The ReAct loop over native tool calls, as a function of injected parts: a model, the
 * tool specs, an executor, and a step cap (there is always one). A step is one model
 * call. The loop stops when the model answers without tool calls, or when the budget
 * is spent; every assistant turn and tool result is reported through `onMessage`.
 */
import type { ChatMessage, ChatModel, ChatResponse, ToolCall, ToolSpec } from "../../llm/chat-model.js";

export type ToolObservation = { content: string; ok: boolean };

export type ReactLoopInput = {
  model: ChatModel;
  messages: ChatMessage[];
  tools: ToolSpec[];
  executeTool: (call: ToolCall) => Promise<ToolObservation>;
  maxSteps: number;
  /** Awaited before the loop goes on (the orchestrator stores each message in order). */
  onMessage?: (message: ChatMessage) => void | Promise<void>;
  traceId?: string;
  agentId?: string;
  signal?: AbortSignal;
};

export type ReactLoopResult =
  | {
      stop: "final";
      answer: string;
      steps: number;
      messages: ChatMessage[];
      /** The answer's stream broke after some of it was shown: `answer` is what arrived. */
      interrupted?: ChatResponse["interrupted"];
    }
  | { stop: "step_budget"; steps: number; messages: ChatMessage[]; toolsUsed: string[] };

export async function runReactLoop(input: ReactLoopInput): Promise<ReactLoopResult> {
  const messages = [...input.messages];
  const toolsUsed: string[] = [];
  const push = async (message: ChatMessage) => {
    messages.push(message);
    await input.onMessage?.(message);
  };
  for (let step = 1; step <= input.maxSteps; step += 1) {
    // A cancelled turn stops here, not at the next model call's failure.
    input.signal?.throwIfAborted();
    const response = await input.model.complete({
      messages,
      tools: input.tools,
      purpose: "react",
      ...(input.traceId ? { traceId: input.traceId } : {}),
      ...(input.agentId ? { agentId: input.agentId } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (response.toolCalls.length === 0) {
      const answer = response.content ?? "";
      await push({
        role: "assistant",
        content: answer,
        ...(response.reasoning ? { reasoning: response.reasoning } : {}),
      });
      return {
        stop: "final",
        answer,
        steps: step,
        messages,
        ...(response.interrupted ? { interrupted: response.interrupted } : {}),
      };
    }
    await push({
      role: "assistant",
      content: response.content,
      toolCalls: response.toolCalls,
      ...(response.reasoning ? { reasoning: response.reasoning } : {}),
    });
    for (const call of response.toolCalls) {
      toolsUsed.push(call.name);
      const observation = await input.executeTool(call);
      await push({ role: "tool", toolCallId: call.id, content: observation.content });
    }
  }
  return { stop: "step_budget", steps: input.maxSteps, messages, toolsUsed };
}
