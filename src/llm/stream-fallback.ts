/**
 * When an endpoint cannot stream, and what the adapter remembers about it. An endpoint
 * (base URL + model) starts out streaming with `stream_options.include_usage`; it drops to
 * streaming without `stream_options` when the server rejects that option, and to plain
 * (non-streaming) requests when the server rejects `stream`, answers a streaming request
 * with JSON, or shows a streaming quirk that the same request without `stream` does not
 * have. Each step down is remembered for the life of the client and logged once.
 */
import OpenAI from "openai";
import type { Logger } from "../log/logger.js";
import type { ChatRequest, ChatResponse } from "./chat-model.js";

/** How an endpoint is asked: streaming with usage, streaming without `stream_options`, or not streaming. */
export type StreamMode = "stream" | "stream-bare" | "json";

export type StreamMemory = {
  mode(endpoint: string): StreamMode;
  /** Remembers a step down (never up) and logs it, once per endpoint and mode. */
  remember(endpoint: string, mode: StreamMode, reason: string): void;
};

const RANK: Record<StreamMode, number> = { stream: 0, "stream-bare": 1, json: 2 };

export function createStreamMemory(logger: Logger | undefined): StreamMemory {
  const modes = new Map<string, StreamMode>();
  return {
    mode: (endpoint) => modes.get(endpoint) ?? "stream",
    remember(endpoint, mode, reason) {
      const now = modes.get(endpoint) ?? "stream";
      if (RANK[mode] <= RANK[now]) return;
      modes.set(endpoint, mode);
      logger?.warn(
        { endpoint, streaming: mode, reason },
        mode === "json"
          ? "the model server does not stream replies reliably: asking it without streaming from now on"
          : "the model server rejects stream_options: streaming without token usage from now on",
      );
    },
  };
}

/**
 * What to try after a streaming request failed, when the failure may have been the
 * streaming itself: a 4xx whose text names `stream_options` (try streaming without it), a
 * 4xx whose text names `stream`, or a 400, 422 or 501 of any text (try without streaming).
 * The plain request that follows tells which it was: the mode is remembered only if it
 * succeeds, and an ordinary bad request fails again the same way and is reported as such.
 */
export function modeAfterRejection(error: unknown, mode: StreamMode): StreamMode | undefined {
  if (!(error instanceof OpenAI.APIError) || error.status === undefined || mode === "json") return undefined;
  const status = error.status;
  // Keys, rate limits and timeouts say nothing about streaming.
  if (status === 401 || status === 403 || status === 408 || status === 429) return undefined;
  const text = `${error.message} ${JSON.stringify(error.error ?? "")}`;
  const clientError = status >= 400 && status < 500;
  if (mode === "stream" && clientError && /stream_options|include_usage/i.test(text)) return "stream-bare";
  // `\bstream` names the parameter ("stream", "streaming", "stream_options"), not "upstream".
  if ((clientError && /\bstream/i.test(text)) || status === 400 || status === 422 || status === 501) return "json";
  return undefined;
}

/**
 * A streamed reply that the same request without `stream` is known to answer better:
 * Ollama drops tool calls when streaming (the stream ends for `tool_calls` with none, or
 * ends empty although tools were offered), and a vLLM tool parser bug streams a call's
 * name without its arguments. Undefined when the reply looks whole.
 */
export function streamQuirk(
  response: ChatResponse,
  request: ChatRequest,
  callsWithoutArguments: number,
): string | undefined {
  if (response.finishReason === "tool_calls" && response.toolCalls.length === 0)
    return "the stream ended for tool calls but carried none";
  const offeredTools = (request.tools?.length ?? 0) > 0;
  const empty = response.toolCalls.length === 0 && (response.content ?? "").trim() === "";
  // "length": the tokens went to reasoning; without streaming they would too.
  if (offeredTools && empty && response.finishReason !== "length")
    return "the stream carried an empty reply although tools were offered";
  if (callsWithoutArguments > 0) return "the stream carried a tool call without its arguments";
  return undefined;
}
