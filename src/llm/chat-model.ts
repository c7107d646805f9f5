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
};

export type ChatModel = {
  readonly model: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
};
