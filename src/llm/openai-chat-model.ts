/**
 * The adapter to any OpenAI-compatible chat completions server (OpenAI, DeepSeek,
 * DashScope compatible mode, Ollama, vLLM), non-streaming (Ollama drops tool calls
 * when streaming). It absorbs the servers' quirks: missing or empty tool-call ids,
 * argument text that is not JSON, `reasoning_content` / `reasoning`, `content: null`.
 * HTTP failures become ModelError kinds here and nowhere else.
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from "./chat-model.js";
import { createRedactor } from "../log/redact.js";
import { ModelError } from "./model-errors.js";

export type OpenAIChatModelOptions = {
  baseURL: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  fetch?: typeof fetch;
  /** Waits between attempts; tests pass a fast one. */
  backoffMs?: (retry: number) => number;
};

/** 0.5 s, 1 s, 2 s ... capped at 8 s: a retry waits long enough to help, never long enough to bore. */
const defaultBackoff = (retry: number) => Math.min(8_000, 500 * 2 ** (retry - 1));

export function createOpenAIChatModel(options: OpenAIChatModelOptions): ChatModel {
  const client = new OpenAI({
    baseURL: options.baseURL,
    // Servers that need no key (Ollama, vLLM) still get a header the SDK insists on.
    apiKey: options.apiKey ?? "not-needed",
    timeout: options.timeoutMs,
    // Retries are ours (below), so the user can be told about each one.
    maxRetries: 0,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  // A server may echo the key it refused ("Incorrect API key provided: sk-..."), and the
  // error text goes to the chat, the gaps table and the logs.
  const { redact } = createRedactor(options.apiKey ? [options.apiKey] : []);
  return {
    model: options.model,
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const maxAttempts = options.maxRetries + 1;
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await attemptOnce(request);
        } catch (error) {
          const failure = mapError(error, redact);
          if (!failure.transient || attempt >= maxAttempts || request.signal?.aborted) throw failure;
          request.onRetry?.({ attempt: attempt + 1, maxAttempts, reason: failure.message });
          const waitMs = failure.retryAfterMs ?? (options.backoffMs ?? defaultBackoff)(attempt);
          await sleep(waitMs, request.signal);
          if (request.signal?.aborted) throw mapError(new OpenAI.APIUserAbortError(), redact);
        }
      }
    },
  };

  async function attemptOnce(request: ChatRequest): Promise<ChatResponse> {
    const completion = await client.chat.completions.create(
      {
        model: options.model,
        messages: request.messages.map(toWire),
        ...(request.tools && request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                type: "function" as const,
                function: { name: tool.name, description: tool.description, parameters: tool.parameters },
              })),
              tool_choice: request.toolChoice ?? "auto",
            }
          : {}),
        ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
      },
      request.signal ? { signal: request.signal } : {},
    );
    return fromWire(completion, options.model);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function toWire(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    case "assistant": {
      const wire: Record<string, unknown> = { role: "assistant", content: message.content };
      if (message.toolCalls && message.toolCalls.length > 0) {
        wire.tool_calls = message.toolCalls.map((call) => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: call.argumentsText },
        }));
      }
      // DeepSeek's thinking mode wants its reasoning back with tool turns.
      if (message.reasoning) wire.reasoning_content = message.reasoning;
      return wire as unknown as ChatCompletionMessageParam;
    }
  }
}

type WireCompletion = {
  model?: string;
  choices?: { message?: Record<string, unknown>; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null;
};

export function fromWire(completion: unknown, fallbackModel: string): ChatResponse {
  const wire = completion as WireCompletion;
  const choice = wire.choices?.[0];
  if (!choice?.message)
    throw new ModelError("bad_response", "the model server answered without a message (no choices[0].message)");
  const message = choice.message;
  const content = typeof message.content === "string" ? message.content : null;
  const reasoning =
    typeof message.reasoning_content === "string"
      ? message.reasoning_content
      : typeof message.reasoning === "string"
        ? message.reasoning
        : undefined;
  const rawCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  const toolCalls = rawCalls.flatMap((raw, index) => parseToolCall(raw, index));
  const usage = wire.usage
    ? {
        promptTokens: wire.usage.prompt_tokens ?? 0,
        completionTokens: wire.usage.completion_tokens ?? 0,
        totalTokens: wire.usage.total_tokens ?? (wire.usage.prompt_tokens ?? 0) + (wire.usage.completion_tokens ?? 0),
      }
    : undefined;
  return {
    content,
    toolCalls,
    ...(reasoning ? { reasoning } : {}),
    ...(usage ? { usage } : {}),
    finishReason: choice.finish_reason ?? null,
    model: wire.model ?? fallbackModel,
  };
}

function parseToolCall(raw: unknown, index: number): ToolCall[] {
  const call = raw as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
  const name = typeof call.function?.name === "string" ? call.function.name : "";
  if (!name) return [];
  // Some servers send no id, or an empty one: the tool message needs one to refer to.
  const id =
    typeof call.id === "string" && call.id.length > 0 ? call.id : `call_${index}_${randomBytes(4).toString("hex")}`;
  const rawArguments = call.function?.arguments;
  const argumentsText =
    typeof rawArguments === "string" ? rawArguments : rawArguments === undefined ? "{}" : JSON.stringify(rawArguments);
  return [{ id, name, argumentsText, arguments: parseArguments(argumentsText) }];
}

/** Parses tool arguments; tolerates an empty string and a code fence around the JSON. */
export function parseArguments(text: string): ToolCall["arguments"] {
  const trimmed = text
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  if (trimmed === "") return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(trimmed);
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return { ok: false, error: "arguments must be a JSON object" };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, error: `arguments are not valid JSON: ${(error as Error).message}` };
  }
}

/** The deepest cause's words ("connect ECONNREFUSED 127.0.0.1:9"), not every wrapper's "Connection error." again. */
function rootCause(error: Error): string {
  let deepest: unknown = error;
  for (let depth = 0; depth < 5 && deepest instanceof Error && deepest.cause instanceof Error; depth += 1)
    deepest = deepest.cause;
  const last = deepest as Error & { code?: string };
  const text = last.message || last.code || "no detail";
  return last.code && !text.includes(last.code) ? `${last.code}: ${text}` : text;
}

/** Redacts before cutting: a secret cut in half would no longer match. */
function mapError(error: unknown, redact: (text: string) => string): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError)
    return new ModelError("timeout", "the model server did not answer in time", undefined, { cause: error });
  if (error instanceof OpenAI.APIConnectionError)
    return new ModelError("connection", `cannot reach the model server (${redact(rootCause(error))})`, undefined, {
      cause: error,
    });
  if (error instanceof OpenAI.APIUserAbortError)
    return new ModelError("timeout", "the model call was cancelled", undefined, { cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status;
    const detail = redact(error.message).slice(0, 300);
    if (status === 429) {
      const seconds = Number(error.headers?.get?.("retry-after"));
      // A server asking for minutes is better reported than waited for inside one turn.
      const retryAfterMs = Number.isFinite(seconds) && seconds >= 0 && seconds <= 30 ? seconds * 1000 : undefined;
      return new ModelError("rate_limit", `the model server is rate limiting: ${detail}`, status, {
        cause: error,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (status === 401 || status === 403)
      return new ModelError("auth", `the model server refused the API key (${status}): check LLM_API_KEY`, status, {
        cause: error,
      });
    if (status !== undefined && status >= 500)
      return new ModelError("server", `the model server failed (${status}): ${detail}`, status, { cause: error });
    if (status === 408) return new ModelError("timeout", `the model server timed out (408)`, status, { cause: error });
    return new ModelError(
      "bad_request",
      `the model server rejected the request (${status ?? "?"}): ${detail}`,
      status,
      { cause: error },
    );
  }
  return new ModelError("bad_response", `unexpected model failure: ${redact((error as Error).message)}`, undefined, {
    cause: error,
  });
}
