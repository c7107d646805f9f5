import type { ModelErrorKind } from "./model-errors.js";

/**
 * The narrow interface the agent talks to. The loop has no HTTP in it: tests use a
 * scripted model or the loopback fake server; production uses the OpenAI adapter.
 */
export type ToolCall = {
  id: string;
  name: string;
  /** Raw argument text as the model sent it. */
  argumentsText: string;
  /** Parsed arguments, or the reason they could not be parsed. */
  arguments: { ok: true; value: Record<string, unknown> } | { ok: false; error: string };
};

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; toolCalls?: ToolCall[]; reasoning?: string }
  | { role: "tool"; toolCallId: string; content: string };

export type ToolSpec = { name: string; description: string; parameters: Record<string, unknown> };

/**
 * Where a streamed answer's text goes while it arrives. Set only on calls a person may
 * watch (the loop's steps and the partial answer); the adapter streams when it is set and
 * the endpoint streams, and returns the same ChatResponse either way.
 */
export type ModelStreamSink = {
  /** A piece of the response's text (content deltas only: never reasoning, never tool-call arguments). */
  onText(delta: string): void;
  /** The response calls a tool (said once per call, as its name arrives): text before it was not the answer. */
  onToolCall(name: string): void;
};

export type ChatRequest = {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  toolChoice?: "auto" | "none";
  /** What the call is for, recorded with its token usage. */
  purpose: "route" | "react" | "summary" | "partial" | "draft" | "distill";
  signal?: AbortSignal;
  /** Told before each retry of a failed attempt (the console shows it; channels keep typing). */
  onRetry?: (retry: ModelRetry) => void;
  maxTokens?: number;
  /** Stream the response's text here as it arrives (see ModelStreamSink). */
  stream?: ModelStreamSink;
  /** For the usage record and logs. */
  traceId?: string;
  agentId?: string;
};

export type ModelRetry = { attempt: number; maxAttempts: number; reason: string };

export type TokenUsage = { promptTokens: number; completionTokens: number; totalTokens: number };

export type ChatResponse = {
  content: string | null;
  toolCalls: ToolCall[];
  /** Thinking text (reasoning_content / reasoning), sent back with tool turns. */
  reasoning?: string;
  usage?: TokenUsage;
  finishReason: string | null;
  model: string;
  /**
   * The stream broke after some of its text had reached `stream.onText`: `content` is the
   * text that arrived, and this says what broke it (the turn ends the answer with a note).
   */
  interrupted?: { kind: ModelErrorKind; detail: string };
};

export type ChatModel = {
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
};
