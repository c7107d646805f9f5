/**
 * Reads the body of one streaming chat completions response: SSE chunks into a stream
 * assembly (text reaches the sink as it arrives), or a JSON body from a server that
 * ignored `stream`. How it ended decides what the adapter does next:
 * - `complete`: `[DONE]`, or the body ended after a finish reason;
 * - `json`: the server answered with a whole completion instead;
 * - `broken`: the connection reset, the body ended early (no `[DONE]`, no finish reason),
 *   nothing arrived for `idleMs`, or the server sent an error object mid-stream.
 * A data line that is not JSON throws a `bad_response` ModelError with the line in its
 * log detail; a cancel by the caller throws the SDK's abort error (mapped as today).
 * Whatever happens, the HTTP request is closed when reading stops.
 */
import OpenAI from "openai";
import type { ModelStreamSink } from "./chat-model.js";
import { ModelError, type ModelErrorKind } from "./model-errors.js";
import { rootCause } from "./root-cause.js";
import { sseEvents } from "./sse-lines.js";
import { createStreamAssembly, type StreamAssembly } from "./stream-assembly.js";

export type StreamOutcome =
  | { kind: "complete"; assembly: StreamAssembly }
  | { kind: "json"; completion: unknown }
  | { kind: "broken"; assembly: StreamAssembly; error: ModelError };

export type StreamReadOptions = {
  sink: ModelStreamSink;
  /** The longest wait for the next bytes before the stream counts as stalled. */
  idleMs: number;
  /** Aborts this HTTP request (its signal is linked into the request's). */
  abort: AbortController;
  /** The caller's signal: its abort is a cancel, not a broken stream. */
  signal: AbortSignal | undefined;
  redact: (text: string) => string;
};

/** How much of a malformed line reaches the log. */
const LOG_DETAIL_CHARS = 200;

export async function readStream(response: Response, options: StreamReadOptions): Promise<StreamOutcome> {
  const assembly = createStreamAssembly(options.sink);
  if (!response.body) return broken(assembly, "connection", "the model server's stream had no body");
  let stalled = false;
  const chunks = watched(response.body, options.idleMs, () => {
    stalled = true;
    options.abort.abort();
  });
  try {
    const type = response.headers.get("content-type") ?? "";
    if (/json/i.test(type) && !/event-stream/i.test(type))
      return { kind: "json", completion: await readJson(chunks, options.redact) };
    for await (const event of sseEvents(chunks)) {
      const data = event.data.trim();
      if (data === "") continue;
      if (data === "[DONE]") return { kind: "complete", assembly };
      const payload = parsePayload(data, event.complete, options.redact);
      // The body ended in the middle of this line: it was cut off, not malformed.
      if (payload === undefined) break;
      const failure = streamedError(payload, event.event, options.redact);
      if (failure) return { kind: "broken", assembly, error: failure };
      assembly.add(payload);
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    if (options.signal?.aborted) throw new OpenAI.APIUserAbortError();
    if (stalled)
      return broken(
        assembly,
        "timeout",
        `the model server stopped sending its reply (nothing for ${Math.round(options.idleMs / 1000)} s)`,
      );
    return broken(assembly, "connection", `the model server's stream broke off (${options.redact(rootCause(error))})`);
  } finally {
    options.abort.abort();
  }
  if (assembly.finished) return { kind: "complete", assembly };
  return broken(assembly, "connection", "the model server's stream ended before the reply was complete");
}

function broken(assembly: StreamAssembly, kind: ModelErrorKind, message: string): StreamOutcome {
  return { kind: "broken", assembly, error: new ModelError(kind, message) };
}

/** The body's bytes; `onStall` when none arrive for `idleMs` (time spent by the reader in between does not count). */
async function* watched(
  body: ReadableStream<Uint8Array>,
  idleMs: number,
  onStall: () => void,
): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  let timer = setTimeout(onStall, idleMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      clearTimeout(timer);
      if (done) return;
      yield value;
      timer = setTimeout(onStall, idleMs);
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}

async function readJson(chunks: AsyncIterable<Uint8Array>, redact: (text: string) => string): Promise<unknown> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  const text = Buffer.concat(parts).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ModelError("bad_response", "the model server sent a malformed reply (not JSON)", undefined, {
      logDetail: redact(text).slice(0, LOG_DETAIL_CHARS),
    });
  }
}

/** The chunk a data line holds; undefined for an unfinished last line that does not parse. */
function parsePayload(data: string, complete: boolean, redact: (text: string) => string): object | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(data);
  } catch {
    if (!complete) return undefined;
  }
  if (typeof payload === "object" && payload !== null && !Array.isArray(payload)) return payload;
  throw new ModelError("bad_response", "the model server sent a malformed stream line (not a JSON chunk)", undefined, {
    // Redacted before cutting: a secret cut in half would no longer match.
    logDetail: redact(data).slice(0, LOG_DETAIL_CHARS),
  });
}

/** An error the server sent inside the stream (`data: {"error": …}`, or an `event: error`). */
function streamedError(payload: object, eventName: string | undefined, redact: (text: string) => string) {
  const field = (payload as { error?: unknown }).error;
  if (eventName !== "error" && (field === undefined || field === null)) return undefined;
  const body = (typeof field === "object" && field !== null ? field : payload) as Record<string, unknown>;
  const status = [body.code, body.status].find(
    (value): value is number => typeof value === "number" && value >= 400 && value < 600,
  );
  const words = typeof body.message === "string" ? body.message : typeof field === "string" ? field : "no detail";
  const detail = redact(words).slice(0, 300);
  if (status === 429) return new ModelError("rate_limit", `the model server is rate limiting: ${detail}`, status);
  if (status !== undefined && status < 500)
    return new ModelError("bad_request", `the model server rejected the request (${status}): ${detail}`, status);
  return new ModelError("server", `the model server failed mid-stream: ${detail}`, status);
}
