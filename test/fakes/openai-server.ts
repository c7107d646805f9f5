/**
 * A loopback fake of an OpenAI-compatible chat completions server. It answers
 * `POST /v1/chat/completions` from a scripted queue (or a responder function), with
 * text, tool calls, raw bodies, HTTP errors and delays, and records every request so
 * tests can assert what the model was shown.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export type ScriptedReply =
  | { text: string | null; reasoning?: string; delayMs?: number }
  | {
      toolCalls: { name: string; arguments: string | Record<string, unknown>; id?: string | null }[];
      text?: string | null;
      delayMs?: number;
    }
  | { status: number; body?: unknown; delayMs?: number; headers?: Record<string, string> }
  | { raw: unknown; delayMs?: number };

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
  authorization?: string;
};

export type FakeOpenAI = {
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /** Answers requests the queue has nothing for (or every request, when set before). */
  respond(responder: (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>): void;
  pending(): number;
  close(): Promise<void>;
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let responder: ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>) | undefined;
  let counter = 0;

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
    const reply = queue.shift() ??
      (await responder?.(body)) ?? { status: 500, body: { error: { message: "fake: no scripted reply left" } } };
    if ("delayMs" in reply && reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (response.destroyed) return;
    if ("status" in reply) {
      response
        .writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
        .end(JSON.stringify(reply.body ?? { error: { message: `fake error ${reply.status}` } }));
      return;
    }
    counter += 1;
    const completion =
      "raw" in reply
        ? reply.raw
        : {
            id: `chatcmpl-${counter}`,
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [
              {
                index: 0,
                finish_reason: "toolCalls" in reply ? "tool_calls" : "stop",
                message:
                  "toolCalls" in reply
                    ? {
                        role: "assistant",
                        content: reply.text ?? null,
                        tool_calls: reply.toolCalls.map((call, index) => ({
                          ...(call.id === null ? {} : { id: call.id ?? `call_${counter}_${index}` }),
                          type: "function",
                          function: {
                            name: call.name,
                            arguments:
                              typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
                          },
                        })),
                      }
                    : {
                        role: "assistant",
                        content: reply.text,
                        ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
                      },
              },
            ],
            usage: { prompt_tokens: 100 + counter, completion_tokens: 20, total_tokens: 120 + counter },
          };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion));
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
    pending: () => queue.length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A routing reply naming skills and an intent key. */
export function routeTo(skills: string[], intentKey: string, confidence = 0.9): ScriptedReply {
  return { text: JSON.stringify({ skills, intent_key: intentKey, confidence }) };
}

/** True for the routing call (its system prompt is the router's). */
export function isRoutingRequest(request: RecordedRequest): boolean {
  return request.messages[0]?.content?.startsWith("You route a chat message") ?? false;
}
