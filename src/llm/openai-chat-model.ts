/**
 * The adapter to any OpenAI-compatible chat completions server (OpenAI, DeepSeek,
 * DashScope compatible mode, Ollama, vLLM). It absorbs the servers' quirks: missing or
 * empty tool-call ids, argument text that is not JSON, `reasoning_content` / `reasoning`,
 * `content: null`. HTTP failures become ModelError kinds here and nowhere else.
 *
 * A call with a stream sink streams (`stream: true`, usage asked for with
 * `stream_options`): text reaches the sink as it arrives and the chunks are put back
 * together into the same ChatResponse a plain call returns. An endpoint that cannot
 * stream, or streams badly (Ollama drops tool calls), is asked without streaming, and
 * that is remembered for the life of the client (stream-fallback.ts). A stream cut off
 * before any text was shown is asked again once; after text was shown, the text so far
 * is returned marked `interrupted`.
 */
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { Logger } from "../log/logger.js";
import { createRedactor } from "../log/redact.js";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelStreamSink, ToolCall } from "./chat-model.js";
import { ModelError } from "./model-errors.js";
import { rootCause } from "./root-cause.js";
import type { StreamAssembly } from "./stream-assembly.js";
import { createStreamMemory, modeAfterRejection, streamQuirk, type StreamMode } from "./stream-fallback.js";
import { readStream } from "./stream-reader.js";

export type OpenAIChatModelOptions = {
  baseURL: string;
  apiKey?: string;
  model: string;
  /** One attempt's wait for the server's answer; when streaming, also the longest wait for the next bytes. */
  timeoutMs: number;
  maxRetries: number;
  fetch?: typeof fetch;
  /** Waits between attempts; tests pass a fast one. */
  backoffMs?: (retry: number) => number;
  /** Where a streaming fallback (and a stream asked again) is logged. */
  logger?: Logger;
};

/** 0.5 s, 1 s, 2 s ... capped at 8 s: a retry waits long enough to help, never long enough to bore. */
const defaultBackoff = (retry: number) => Math.min(8_000, 500 * 2 ** (retry - 1));

/** What one `complete` call may still spend beyond its retries: one fresh start of a stream cut off before any text. */
type CallBudget = { restarts: number };

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
  const endpoint = `${options.baseURL} ${options.model}`;
  const memory = createStreamMemory(options.logger);
  const log = options.logger;
  return {
    model: options.model,
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const maxAttempts = options.maxRetries + 1;
      const budget: CallBudget = { restarts: 1 };
      const call = request.stream ? { ...request, stream: guarded(request.stream, log) } : request;
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await attemptOnce(call, budget);
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

  async function attemptOnce(request: ChatRequest, budget: CallBudget): Promise<ChatResponse> {
    if (!request.stream) return plain(request);
    if (memory.mode(endpoint) === "json") return replayed(request.stream, await plain(request), false);
    return streamed(request, request.stream, budget);
  }

  function params(request: ChatRequest): ChatCompletionCreateParamsNonStreaming {
    return {
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
    };
  }

  async function plain(request: ChatRequest): Promise<ChatResponse> {
    const completion = await client.chat.completions.create(
      params(request),
      request.signal ? { signal: request.signal } : {},
    );
    return fromWire(completion, options.model);
  }

  async function streamed(request: ChatRequest, sink: ModelStreamSink, budget: CallBudget): Promise<ChatResponse> {
    const abort = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, abort.signal]) : abort.signal;
    const opened = await openStream(request, signal);
    if ("plain" in opened) return replayed(sink, opened.plain, false);
    const outcome = await readStream(opened.response, {
      sink,
      idleMs: options.timeoutMs,
      abort,
      signal: request.signal,
      redact,
    });
    switch (outcome.kind) {
      case "json": {
        const response = fromWire(outcome.completion, options.model);
        memory.remember(endpoint, "json", "the server answered a streaming request with JSON");
        return replayed(sink, response, false);
      }
      case "broken": {
        const { assembly, error } = outcome;
        if (assembly.shownText) return interrupted(assembly, error);
        if (error.kind !== "connection" || budget.restarts <= 0) throw error;
        budget.restarts -= 1;
        log?.info({ endpoint, reason: error.message }, "the model's stream broke off before any text: asking again");
        return streamed(request, sink, budget);
      }
      case "complete":
        return completed(request, sink, outcome.assembly);
    }
  }

  /**
   * The streaming request's response, stepping down while the server rejects how it was
   * asked (see modeAfterRejection): the step is remembered only once a request made that
   * way was accepted, so an ordinary bad request fails again and is reported as today.
   */
  async function openStream(
    request: ChatRequest,
    signal: AbortSignal,
  ): Promise<{ response: Response } | { plain: ChatResponse }> {
    let mode: StreamMode = memory.mode(endpoint);
    let reason = "";
    for (;;) {
      if (mode === "json") {
        const response = await plain(request);
        memory.remember(endpoint, mode, reason);
        return { plain: response };
      }
      try {
        const response = await client.chat.completions
          .create(
            {
              ...params(request),
              stream: true,
              ...(mode === "stream" ? { stream_options: { include_usage: true } } : {}),
            },
            { signal },
          )
          .asResponse();
        memory.remember(endpoint, mode, reason);
        return { response };
      } catch (error) {
        const next = modeAfterRejection(error, mode);
        if (!next) throw error;
        reason = `rejected (${(error as { status?: number }).status}): ${redact((error as Error).message).slice(0, 200)}`;
        mode = next;
      }
    }
  }

  /** A whole stream; asked again without streaming when it shows a known quirk (stream-fallback.ts). */
  async function completed(
    request: ChatRequest,
    sink: ModelStreamSink,
    assembly: StreamAssembly,
  ): Promise<ChatResponse> {
    if (!assembly.sawChoice)
      throw new ModelError("bad_response", "the model server's stream held no message (no choices)");
    const response = fromWire(assembly.completion(), options.model);
    const quirk = streamQuirk(response, request, assembly.callsWithoutArguments);
    if (!quirk) return response;
    const again = await plain(request);
    // Remembered only when the plain answer shows the stream lost something: a model that
    // really answered nothing answers nothing either way.
    if (again.toolCalls.length > 0) memory.remember(endpoint, "json", quirk);
    else log?.info({ endpoint, quirk }, "a streamed reply looked incomplete; the plain request agreed with it");
    return replayed(sink, again, assembly.shownText);
  }

  /** The stream broke after some text was shown: that text is the reply, marked as cut off. */
  function interrupted(assembly: StreamAssembly, error: ModelError): ChatResponse {
    log?.info({ endpoint, kind: error.kind, reason: error.message }, "the model's stream broke off after some text");
    const reasoning = assembly.reasoningSoFar();
    return {
      content: assembly.textSoFar(),
      toolCalls: [],
      ...(reasoning ? { reasoning } : {}),
      finishReason: "interrupted",
      model: assembly.model() ?? options.model,
      interrupted: { kind: error.kind, detail: error.message },
    };
  }
}

/** The sink with its failures logged (once), never the call's: a preview that cannot be shown must not cost the answer. */
function guarded(sink: ModelStreamSink, log: Logger | undefined): ModelStreamSink {
  let reported = false;
  const safely = (tell: () => void) => {
    try {
      tell();
    } catch (error) {
      if (!reported) log?.warn({ err: error }, "showing a streamed reply failed; the answer goes on without it");
      reported = true;
    }
  };
  return {
    onText: (delta) => safely(() => sink.onText(delta)),
    onToolCall: (name) => safely(() => sink.onToolCall(name)),
  };
}

/**
 * A reply that was not streamed, told to the sink as one piece, so the sink sees every
 * reply the same way: its text (unless text of this call was already shown), then its
 * tool calls.
 */
function replayed(sink: ModelStreamSink, response: ChatResponse, textShown: boolean): ChatResponse {
  if (!textShown && response.content) sink.onText(response.content);
  for (const call of response.toolCalls) sink.onToolCall(call.name);
  return response;
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
