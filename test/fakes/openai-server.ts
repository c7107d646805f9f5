/**
 * A loopback fake of an OpenAI-compatible chat completions server. It answers
 * `POST /v1/chat/completions` from a scripted queue (or a responder function), with
 * text, tool calls, raw bodies, HTTP errors and delays, and records every request so
 * tests can assert what the model was shown.
 *
 * A request with `stream: true` gets its text and tool-call replies as server-sent events,
 * the way OpenAI sends them: a role chunk, reasoning and text in several pieces, each tool
 * call's id and name in its first delta and its arguments in pieces after it, a finish
 * chunk, a usage chunk when `stream_options.include_usage` asked for one, then
 * `data: [DONE]`. Put back together, the stream is exactly the non-streamed reply. `raw`
 * and `{status}` replies are answered with JSON either way; `sse` replies are written as
 * given. `streaming("reject")` makes the fake refuse `stream` like a server without it
 * (400), `streaming("ignore")` answers streaming requests with JSON.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";

/** How a streamed reply is sent (ignored when the request does not stream). */
export type StreamScript = {
  /** Wait before each chunk after the first (a model writing 50 tokens/s: 20). Overrides the fake's pace. */
  chunkDelayMs?: number;
  /** Stop after this many chunks (the role chunk is the first) without a finish reason or `[DONE]`. */
  cutAfterChunks?: number;
  /** How the stop looks: the connection reset (default), or the body ending cleanly. */
  cut?: "reset" | "end";
};

export type ScriptedReply =
  | ({ text: string | null; reasoning?: string; delayMs?: number } & StreamScript)
  | ({
      toolCalls: { name: string; arguments: string | Record<string, unknown>; id?: string | null }[];
      text?: string | null;
      reasoning?: string;
      delayMs?: number;
    } & StreamScript)
  | { status: number; body?: unknown; delayMs?: number; headers?: Record<string, string> }
  | { raw: unknown; delayMs?: number }
  | {
      /** Written as the body as given (content type text/event-stream): objects as `data: <json>\n\n`, strings verbatim. */
      sse: (string | Record<string, unknown>)[];
      delayMs?: number;
      chunkDelayMs?: number;
      /** Reset the connection after the last item instead of ending the body. */
      reset?: boolean;
    };

export type RecordedRequest = {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
    reasoning_content?: string;
  }[];
  tools?: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
  tool_choice?: unknown;
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  authorization?: string;
  /** The client closed the connection before the fake had finished its reply (a cancelled stream). */
  closedEarly?: boolean;
  /** When the first text (or reasoning) piece of a streamed reply was written: epoch ms, sub-millisecond. */
  firstTextAt?: number;
  /** How many SSE chunks were written (data lines, `[DONE]` included). */
  chunksSent?: number;
};

/**
 * How the fake treats `stream: true`: `stream` (SSE), `reject` (400 "stream is not
 * supported", before a scripted reply is taken), `reject-usage` (400 naming
 * `stream_options`, when the request has them), `ignore` (JSON as if not asked to stream).
 */
export type FakeStreaming = "stream" | "reject" | "reject-usage" | "ignore";

export type FakeOpenAIOptions = { streaming?: FakeStreaming; chunkDelayMs?: number };

export type FakeOpenAI = {
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /** Answers requests the queue has nothing for (or every request, when set before). */
  respond(responder: (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>): void;
  /** How later streaming requests are treated (see FakeStreaming). */
  streaming(mode: FakeStreaming): void;
  /** Wait between streamed chunks from now on (a reply's own chunkDelayMs wins). */
  pace(chunkDelayMs: number): void;
  pending(): number;
  close(): Promise<void>;
};

type Chunk = { delta: Record<string, unknown>; finish?: string; text?: boolean };

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let responder: ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>) | undefined;
  let counter = 0;
  let streamingMode: FakeStreaming = options.streaming ?? "stream";
  let paceMs = options.chunkDelayMs ?? 0;

  const server: Server = createServer((request, response) => {
    void handle(request, response);
  });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
      response
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest;
    body.authorization = request.headers.authorization;
    requests.push(body);
    let cutByUs = false;
    response.on("close", () => {
      if (!response.writableFinished && !cutByUs) body.closedEarly = true;
    });
    const rejection = rejectionOf(body, streamingMode);
    if (rejection) {
      response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(rejection));
      return;
    }
    const reply = queue.shift() ??
      (await responder?.(body)) ?? { status: 500, body: { error: { message: "fake: no scripted reply left" } } };
    if ("delayMs" in reply && reply.delayMs) await sleep(reply.delayMs);
    if (response.destroyed) return;
    if ("status" in reply) {
      response
        .writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
        .end(JSON.stringify(reply.body ?? { error: { message: `fake error ${reply.status}` } }));
      return;
    }
    if ("sse" in reply) {
      cutByUs = reply.reset === true;
      await writeSse(response, body, reply.sse, reply.chunkDelayMs ?? paceMs, reply.reset === true);
      return;
    }
    counter += 1;
    if ("raw" in reply) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply.raw));
      return;
    }
    if (body.stream === true && streamingMode !== "ignore") {
      cutByUs = reply.cutAfterChunks !== undefined && (reply.cut ?? "reset") === "reset";
      await streamReply(response, body, reply, counter, paceMs);
      return;
    }
    response
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(completionOf(reply, body, counter)));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    respond: (next) => {
      responder = next;
    },
    streaming: (mode) => {
      streamingMode = mode;
    },
    pace: (chunkDelayMs) => {
      paceMs = chunkDelayMs;
    },
    pending: () => queue.length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type AnswerReply = Extract<ScriptedReply, { text: string | null }> | Extract<ScriptedReply, { toolCalls: unknown }>;

function rejectionOf(body: RecordedRequest, mode: FakeStreaming): unknown {
  if (body.stream !== true) return undefined;
  if (mode === "reject")
    return {
      error: { message: "stream is not supported", type: "invalid_request_error", param: "stream", code: null },
    };
  if (mode === "reject-usage" && body.stream_options)
    return {
      error: {
        message: "Unrecognized request argument supplied: stream_options",
        type: "invalid_request_error",
        param: "stream_options",
        code: null,
      },
    };
  return undefined;
}

function usageOf(counter: number) {
  return { prompt_tokens: 100 + counter, completion_tokens: 20, total_tokens: 120 + counter };
}

function wireToolCalls(reply: Extract<ScriptedReply, { toolCalls: unknown }>, counter: number) {
  return reply.toolCalls.map((call, index) => ({
    ...(call.id === null ? {} : { id: call.id ?? `call_${counter}_${index}` }),
    type: "function",
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    },
  }));
}

function completionOf(reply: AnswerReply, body: RecordedRequest, counter: number) {
  const message =
    "toolCalls" in reply
      ? {
          role: "assistant",
          content: reply.text ?? null,
          ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
          tool_calls: wireToolCalls(reply, counter),
        }
      : { role: "assistant", content: reply.text, ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}) };
  return {
    id: `chatcmpl-${counter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, finish_reason: "toolCalls" in reply ? "tool_calls" : "stop", message }],
    usage: usageOf(counter),
  };
}

/** The reply as OpenAI streams it (see the file's comment). */
function chunksOf(reply: AnswerReply, counter: number): Chunk[] {
  const text = "toolCalls" in reply ? (reply.text ?? null) : reply.text;
  const chunks: Chunk[] = [{ delta: { role: "assistant", content: text === null ? null : "" } }];
  for (const piece of splitText(reply.reasoning ?? ""))
    chunks.push({ delta: { reasoning_content: piece }, text: true });
  for (const piece of splitText(text ?? "")) chunks.push({ delta: { content: piece }, text: true });
  if ("toolCalls" in reply)
    wireToolCalls(reply, counter).forEach((call, index) => {
      const { arguments: argumentsText, name } = call.function;
      chunks.push({
        delta: {
          tool_calls: [
            { index, ...("id" in call ? { id: call.id } : {}), type: "function", function: { name, arguments: "" } },
          ],
        },
      });
      for (const piece of argumentsText.match(/[\s\S]{1,5}/gu) ?? [])
        chunks.push({ delta: { tool_calls: [{ index, function: { arguments: piece } }] } });
    });
  chunks.push({ delta: {}, finish: "toolCalls" in reply ? "tool_calls" : "stop" });
  return chunks;
}

/** Text in token-like pieces (up to four characters and the spaces after them); joined, they are the text again. */
export function splitText(text: string): string[] {
  return text.match(/\s+|\S{1,4}\s*/gu) ?? [];
}

async function streamReply(
  response: ServerResponse,
  body: RecordedRequest,
  reply: AnswerReply,
  counter: number,
  paceMs: number,
) {
  const delayMs = reply.chunkDelayMs ?? paceMs;
  const base = {
    id: `chatcmpl-${counter}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
  };
  const events: { payload: unknown; text?: boolean }[] = chunksOf(reply, counter).map((chunk) => ({
    payload: { ...base, choices: [{ index: 0, delta: chunk.delta, finish_reason: chunk.finish ?? null }] },
    ...(chunk.text ? { text: true } : {}),
  }));
  if (body.stream_options?.include_usage) events.push({ payload: { ...base, choices: [], usage: usageOf(counter) } });
  startSse(response);
  body.chunksSent = 0;
  for (const [index, event] of events.entries()) {
    if (reply.cutAfterChunks !== undefined && index >= reply.cutAfterChunks) {
      if ((reply.cut ?? "reset") === "reset") response.socket?.destroy();
      else response.end();
      return;
    }
    if (index > 0 && delayMs > 0) await sleep(delayMs);
    if (response.destroyed) return;
    if (event.text && body.firstTextAt === undefined) body.firstTextAt = performance.timeOrigin + performance.now();
    await write(response, `data: ${JSON.stringify(event.payload)}\n\n`);
    body.chunksSent += 1;
  }
  if (delayMs > 0) await sleep(delayMs);
  if (response.destroyed) return;
  response.end("data: [DONE]\n\n");
  body.chunksSent += 1;
}

async function writeSse(
  response: ServerResponse,
  body: RecordedRequest,
  items: (string | Record<string, unknown>)[],
  delayMs: number,
  reset: boolean,
) {
  startSse(response);
  body.chunksSent = 0;
  for (const [index, item] of items.entries()) {
    if (index > 0 && delayMs > 0) await sleep(delayMs);
    if (response.destroyed) return;
    await write(response, typeof item === "string" ? item : `data: ${JSON.stringify(item)}\n\n`);
    body.chunksSent += 1;
  }
  if (reset) response.socket?.destroy();
  else response.end();
}

/** Written through to the socket (so a reset right after it cannot drop it). */
function write(response: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    // A client that hangs up mid-write may take the write's callback with it.
    const done = () => {
      response.off("close", done);
      resolve();
    };
    response.once("close", done);
    response.write(text, done);
  });
}

function startSse(response: ServerResponse) {
  response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
  response.flushHeaders();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A routing reply naming skills and an intent key. */
export function routeTo(skills: string[], intentKey: string, confidence = 0.9): ScriptedReply {
  return { text: JSON.stringify({ skills, intent_key: intentKey, confidence }) };
}

/** True for the routing call (its system prompt is the router's). */
export function isRoutingRequest(request: RecordedRequest): boolean {
  return request.messages[0]?.content?.startsWith("You route a chat message") ?? false;
}
