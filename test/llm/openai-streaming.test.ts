/**
 * The adapter's streaming against the loopback fake: a streamed reply is the same
 * ChatResponse as the plain one, text reaches the sink as it arrives, and servers that do
 * not stream (or stream badly, or break off) are handled as docs/model.md says.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChatRequest, ChatResponse, ModelStreamSink } from "../../src/llm/chat-model.js";
import { ModelError } from "../../src/llm/model-errors.js";
import { createOpenAIChatModel, type OpenAIChatModelOptions } from "../../src/llm/openai-chat-model.js";
import {
  type FakeOpenAI,
  type FakeOpenAIOptions,
  type ScriptedReply,
  startFakeOpenAI,
} from "../fakes/openai-server.js";

const fakes: FakeOpenAI[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

async function setup(options: Partial<OpenAIChatModelOptions> = {}, fakeOptions: FakeOpenAIOptions = {}) {
  const fake = await startFakeOpenAI(fakeOptions);
  fakes.push(fake);
  const logs: { level: number; msg: string; [key: string]: unknown }[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => logs.push(JSON.parse(line)) });
  const model = createOpenAIChatModel({
    baseURL: fake.url,
    apiKey: "sk-test-secret-key-123456",
    model: "m",
    timeoutMs: 2_000,
    maxRetries: 0,
    backoffMs: () => 1,
    logger,
    ...options,
  });
  return { fake, model, logs };
}

/** A sink that records what it was told, in order. */
function recorder() {
  const events: (["text", string] | ["tool", string])[] = [];
  const sink: ModelStreamSink = {
    onText: (delta) => events.push(["text", delta]),
    onToolCall: (name) => events.push(["tool", name]),
  };
  return {
    sink,
    events,
    text: () =>
      events
        .filter(([kind]) => kind === "text")
        .map(([, delta]) => delta)
        .join(""),
    pieces: () => events.filter(([kind]) => kind === "text").length,
    tools: () => events.filter(([kind]) => kind === "tool").map(([, name]) => name),
  };
}

const tools: ChatRequest["tools"] = [{ name: "file_read", description: "read a file", parameters: { type: "object" } }];

function ask(extra: Partial<ChatRequest> = {}): ChatRequest {
  return { messages: [{ role: "user", content: "x" }], purpose: "react", ...extra };
}

/** Generated tool-call ids are random: the same shape is what must match. */
function normalized(response: ChatResponse): ChatResponse {
  return {
    ...response,
    toolCalls: response.toolCalls.map((call) => ({
      ...call,
      id: /^call_\d+_[0-9a-f]{8}$/.test(call.id) ? `generated:${call.id.split("_")[1]}` : call.id,
    })),
  };
}

function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) {
  return { model: "served", choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}

describe("a streamed reply is the plain reply", () => {
  const kinds: [string, ScriptedReply][] = [
    ["text", { text: "Hello there, this is a longer answer.\n\nWith a second paragraph." }],
    ["text with reasoning", { text: "The answer is 42.", reasoning: "Let me think about this carefully." }],
    ["empty text", { text: "" }],
    ["null text", { text: null }],
    ["text in many scripts", { text: "你好，世界 🙂 — héllo wörld ✓" }],
    ["one tool call", { toolCalls: [{ name: "file_read", arguments: { path: "docs/model.md" } }] }],
    [
      "text, reasoning and two tool calls",
      {
        text: "Let me look.",
        reasoning: "Two files are needed.",
        toolCalls: [
          { name: "file_read", arguments: '{"path": "a.txt"}' },
          { name: "shell_exec", arguments: { command: "ls -la", cwd: "/tmp" } },
        ],
      },
    ],
    [
      "tool calls without ids, with bad and empty arguments",
      {
        toolCalls: [
          { name: "file_read", arguments: '{"path": "a"}', id: null },
          { name: "file_read", arguments: "not json", id: "" },
          { name: "noop", arguments: "" },
        ],
      },
    ],
    [
      "a raw completion",
      {
        raw: {
          model: "m2",
          choices: [{ message: { role: "assistant", content: "done", reasoning: "vllm" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 5, completion_tokens: 2 },
        },
      },
    ],
  ];

  it.each(kinds)("%s", async (_name, reply) => {
    const plain = await setup();
    plain.fake.respond(() => reply);
    const expected = await plain.model.complete(ask());
    expect(plain.fake.requests[0]?.stream).toBeUndefined();

    const streaming = await setup();
    streaming.fake.respond(() => reply);
    const seen = recorder();
    const actual = await streaming.model.complete(ask({ stream: seen.sink }));
    expect(streaming.fake.requests[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(normalized(actual)).toEqual(normalized(expected));
    // The sink heard the text (in pieces when the server streamed it) and each call once.
    expect(seen.text()).toBe(expected.content ?? "");
    expect(seen.tools()).toEqual(expected.toolCalls.map((call) => call.name));
    if ("text" in reply && !("raw" in reply) && (reply.text ?? "").length > 12)
      expect(seen.pieces()).toBeGreaterThan(2);
  });

  it.each([
    ["rate limit", { status: 429, body: { error: { message: "slow down" } } }],
    ["server error", { status: 503 }],
    ["refused key", { status: 401 }],
    ["bad request", { status: 400, body: { error: { message: "messages: bad role" } } }],
  ] as [string, ScriptedReply][])("%s fails the same way", async (_name, reply) => {
    const plain = await setup();
    plain.fake.respond(() => reply);
    const expected = await plain.model.complete(ask()).catch((error: unknown) => error);
    const streaming = await setup();
    streaming.fake.respond(() => reply);
    const actual = await streaming.model.complete(ask({ stream: recorder().sink })).catch((error: unknown) => error);
    expect(actual).toBeInstanceOf(ModelError);
    expect({ ...(actual as ModelError), message: (actual as ModelError).message }).toMatchObject({
      kind: (expected as ModelError).kind,
      status: (expected as ModelError).status,
      message: (expected as ModelError).message,
    });
  });
});

describe("assembling streamed tool calls", () => {
  it("puts calls together by index whatever way the server splits them, announcing each once as its name arrives", async () => {
    const { fake, model } = await setup();
    fake.enqueue({
      sse: [
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Checking" }),
        // OpenAI: id and name first, the arguments in pieces, two calls interleaved.
        chunk({
          tool_calls: [{ index: 0, id: "c0", type: "function", function: { name: "file_read", arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 1, id: "c1", type: "function", function: { name: "shell_exec" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'th": "a"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"command":' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: ' "ls"}' } }] }),
        // The whole arguments repeated in every delta (some vLLM parsers), id and name too.
        chunk({ tool_calls: [{ index: 2, id: "c2", function: { name: "grep", arguments: '{"q":' } }] }),
        chunk({ tool_calls: [{ index: 2, id: "c2", function: { name: "grep", arguments: '{"q": "x"}' } }] }),
        chunk({ tool_calls: [{ index: 2, id: "c2", function: { name: "grep", arguments: '{"q": "x"}' } }] }),
        // A whole call in one delta, its arguments an object (Ollama), and no id.
        chunk({ tool_calls: [{ index: 3, function: { name: "web_get", arguments: { url: "https://x" } } }] }),
        chunk({}, "tool_calls", { usage: null }),
        "data: [DONE]\n\n",
      ],
    });
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink }));
    expect(
      response.toolCalls.map(({ id, name, argumentsText, arguments: parsed }) => ({ id, name, argumentsText, parsed })),
    ).toEqual([
      { id: "c0", name: "file_read", argumentsText: '{"path": "a"}', parsed: { ok: true, value: { path: "a" } } },
      {
        id: "c1",
        name: "shell_exec",
        argumentsText: '{"command": "ls"}',
        parsed: { ok: true, value: { command: "ls" } },
      },
      { id: "c2", name: "grep", argumentsText: '{"q": "x"}', parsed: { ok: true, value: { q: "x" } } },
      {
        id: expect.stringMatching(/^call_3_/),
        name: "web_get",
        argumentsText: '{"url":"https://x"}',
        parsed: { ok: true, value: { url: "https://x" } },
      },
    ]);
    expect(response).toMatchObject({ content: "Checking", finishReason: "tool_calls", model: "served" });
    expect(seen.events).toEqual([
      ["text", "Checking"],
      ["tool", "file_read"],
      ["tool", "shell_exec"],
      ["tool", "grep"],
      ["tool", "web_get"],
    ]);
  });

  it("follows calls without an index (a new id starts a call, no id continues the last), and an empty finish reason is none", async () => {
    const { fake, model } = await setup();
    fake.enqueue({
      sse: [
        chunk({ role: "assistant", tool_calls: [{ id: "a", function: { name: "one", arguments: '{"n"' } }] }, ""),
        chunk({ tool_calls: [{ function: { arguments: ": 1}" } }] }, ""),
        chunk({ tool_calls: [{ id: "b", function: { name: "two", arguments: "{}" } }] }, ""),
        chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
      ],
    });
    const response = await model.complete(ask({ stream: recorder().sink }));
    expect(response.toolCalls.map((call) => [call.id, call.name, call.argumentsText])).toEqual([
      ["a", "one", '{"n": 1}'],
      ["b", "two", "{}"],
    ]);
    expect(response.finishReason).toBe("tool_calls");
  });

  it("takes usage from the chunk that carries it and reasoning from reasoning_content or reasoning deltas, never showing either", async () => {
    const { fake, model } = await setup();
    fake.enqueue({
      sse: [
        chunk({ role: "assistant", reasoning: "thinking " }),
        chunk({ reasoning: "hard" }),
        chunk({ content: "Done." }, "stop"),
        { model: "served", choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
        "data: [DONE]\n\n",
      ],
    });
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink }));
    expect(response).toEqual({
      content: "Done.",
      toolCalls: [],
      reasoning: "thinking hard",
      usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 },
      finishReason: "stop",
      model: "served",
    });
    expect(seen.events).toEqual([["text", "Done."]]);
  });
});

it("keeps the answer when the sink fails, and logs that once", async () => {
  const { fake, model, logs } = await setup();
  fake.enqueue({ text: "an answer in several pieces" });
  const failing: ModelStreamSink = {
    onText: () => {
      throw new Error("preview broke");
    },
    onToolCall: () => undefined,
  };
  expect((await model.complete(ask({ stream: failing }))).content).toBe("an answer in several pieces");
  expect(logs.filter((line) => /showing a streamed reply failed/.test(line.msg))).toHaveLength(1);
});

describe("servers that do not stream", () => {
  it("asks again without stream when the server rejects it, remembers that, and logs it once", async () => {
    const { fake, model, logs } = await setup({}, { streaming: "reject" });
    fake.respond(() => ({ text: "plain answer" }));
    const seen = recorder();
    const first = await model.complete(ask({ stream: seen.sink }));
    expect(first.content).toBe("plain answer");
    expect(seen.text()).toBe("plain answer");
    const second = await model.complete(ask({ stream: recorder().sink }));
    expect(second.content).toBe("plain answer");
    expect(fake.requests.map((request) => request.stream)).toEqual([true, undefined, undefined]);
    const fallbacks = logs.filter((line) => /without streaming/.test(line.msg));
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({ streaming: "json", reason: expect.stringMatching(/stream is not supported/) });
  });

  it("does not take an ordinary bad request for a server that cannot stream", async () => {
    const { fake, model, logs } = await setup();
    fake.respond(() => ({ status: 400, body: { error: { message: "messages[0]: unknown role" } } }));
    const error = await model.complete(ask({ stream: recorder().sink })).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: "bad_request", status: 400, message: expect.stringMatching(/unknown role/) });
    // The plain request that tells the two apart failed the same way: streaming is kept.
    fake.respond(() => ({ text: "fine" }));
    await model.complete(ask({ stream: recorder().sink }));
    expect(fake.requests.map((request) => request.stream)).toEqual([true, undefined, true]);
    expect(logs.filter((line) => /without streaming/.test(line.msg))).toEqual([]);
  });

  it("streams without stream_options when only those are rejected (and has no usage then)", async () => {
    const { fake, model, logs } = await setup({}, { streaming: "reject-usage" });
    fake.respond(() => ({ text: "streamed anyway" }));
    const seen = recorder();
    const first = await model.complete(ask({ stream: seen.sink }));
    expect(first).toMatchObject({ content: "streamed anyway", finishReason: "stop" });
    expect(first.usage).toBeUndefined();
    expect(seen.pieces()).toBeGreaterThan(1);
    await model.complete(ask({ stream: recorder().sink }));
    expect(fake.requests.map((request) => [request.stream, request.stream_options])).toEqual([
      [true, { include_usage: true }],
      [true, undefined],
      [true, undefined],
    ]);
    expect(logs.filter((line) => /stream_options/.test(line.msg))).toHaveLength(1);
  });

  it("reads a JSON answer to a streaming request, and asks that endpoint without stream from then on", async () => {
    const { fake, model, logs } = await setup({}, { streaming: "ignore" });
    fake.respond(() => ({ toolCalls: [{ name: "file_read", arguments: { path: "a" } }], text: "Let me see." }));
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink, tools }));
    expect(response).toMatchObject({
      content: "Let me see.",
      toolCalls: [{ name: "file_read" }],
      usage: { promptTokens: 101 },
    });
    expect(seen.events).toEqual([
      ["text", "Let me see."],
      ["tool", "file_read"],
    ]);
    await model.complete(ask({ stream: recorder().sink }));
    expect(fake.requests.map((request) => request.stream)).toEqual([true, undefined]);
    expect(logs.filter((line) => /without streaming/.test(line.msg))).toHaveLength(1);
  });

  it("asks without streaming when a stream ends for tool calls but carries none (Ollama), and remembers it", async () => {
    const { fake, model, logs } = await setup();
    fake.enqueue(
      { sse: [chunk({ role: "assistant", content: "" }), chunk({}, "tool_calls"), "data: [DONE]\n\n"] },
      { toolCalls: [{ name: "file_read", arguments: { path: "a" } }] },
      { text: "next" },
    );
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink, tools }));
    expect(response.toolCalls.map((call) => call.name)).toEqual(["file_read"]);
    expect(seen.tools()).toEqual(["file_read"]);
    await model.complete(ask({ stream: recorder().sink, tools }));
    expect(fake.requests.map((request) => request.stream)).toEqual([true, undefined, undefined]);
    expect(logs.filter((line) => /without streaming/.test(line.msg))).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/tool calls but carried none/) }),
    ]);
  });

  it("asks an empty streamed reply again without streaming when tools were offered, remembering only when that shows a lost call", async () => {
    const { fake, model, logs } = await setup();
    const empty: ScriptedReply = { sse: [chunk({ role: "assistant", content: "" }, "stop"), "data: [DONE]\n\n"] };
    // A model that really said nothing says nothing either way: streaming is kept.
    fake.enqueue(empty, { text: "" });
    expect((await model.complete(ask({ stream: recorder().sink, tools }))).content).toBe("");
    fake.enqueue(empty, { toolCalls: [{ name: "file_read", arguments: {} }] }, { text: "after" });
    expect((await model.complete(ask({ stream: recorder().sink, tools }))).toolCalls).toHaveLength(1);
    await model.complete(ask({ stream: recorder().sink, tools }));
    expect(fake.requests.map((request) => request.stream)).toEqual([true, undefined, true, undefined, undefined]);
    expect(logs.filter((line) => /without streaming/.test(line.msg))).toHaveLength(1);
  });
});

describe("a stream that breaks off", () => {
  it("is asked again once, from the start, when it broke before any text was shown", async () => {
    const { fake, model } = await setup();
    fake.enqueue({ text: "never shown", cutAfterChunks: 1 }, { text: "the whole answer" });
    const seen = recorder();
    const retries: unknown[] = [];
    const response = await model.complete(ask({ stream: seen.sink, onRetry: (retry) => retries.push(retry) }));
    expect(response.content).toBe("the whole answer");
    expect(response.interrupted).toBeUndefined();
    expect(seen.text()).toBe("the whole answer");
    expect(fake.requests).toHaveLength(2);
    // The extra attempt is not one of the configured retries (there are none here).
    expect(retries).toEqual([]);

    // Only once per call: a second break before text is a connection failure.
    fake.enqueue({ text: "a", cutAfterChunks: 1 }, { text: "b", cutAfterChunks: 0, cut: "end" }, { text: "unused" });
    const error = await model.complete(ask({ stream: recorder().sink })).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      kind: "connection",
      message: expect.stringMatching(/ended before the reply was complete/),
    });
    expect(fake.pending()).toBe(1);
  });

  it("returns the text so far, marked interrupted, when it broke after text was shown", async () => {
    const { fake, model } = await setup();
    fake.enqueue({ text: "one two three four five six seven", cutAfterChunks: 3 });
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink }));
    expect(response).toEqual({
      content: "one two ",
      toolCalls: [],
      finishReason: "interrupted",
      model: "m",
      interrupted: { kind: "connection", detail: expect.stringMatching(/stream broke off/) },
    });
    expect(seen.text()).toBe("one two ");
    expect(fake.requests).toHaveLength(1);

    // A body that simply ends without a finish reason or [DONE] is cut off the same way.
    fake.enqueue({ text: "alpha beta gamma", cutAfterChunks: 2, cut: "end" });
    const ended = await model.complete(ask({ stream: recorder().sink }));
    expect(ended).toMatchObject({
      content: "alph",
      interrupted: { kind: "connection", detail: expect.stringMatching(/ended before/) },
    });
  });

  it("drops tool calls that were on their way when it broke", async () => {
    const { fake, model } = await setup();
    fake.enqueue({
      text: "Let me check that",
      toolCalls: [{ name: "file_read", arguments: { path: "a" } }],
      cutAfterChunks: 7,
    });
    const response = await model.complete(ask({ stream: recorder().sink }));
    expect(response).toMatchObject({ content: "Let me check that", toolCalls: [], finishReason: "interrupted" });
  });

  it("reports a malformed data line as a bad response with the line, redacted and cut, for the log only", async () => {
    const { fake, model } = await setup({ maxRetries: 2 });
    const line = `{"choices": [oops sk-test-secret-key-123456 ${"x".repeat(300)}`;
    fake.enqueue({ sse: [chunk({ role: "assistant", content: "Hi" }), `data: ${line}\n\n`, "data: [DONE]\n\n"] });
    const error = (await model
      .complete(ask({ stream: recorder().sink }))
      .catch((caught: unknown) => caught)) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.kind).toBe("bad_response");
    expect(error.message).toMatch(/malformed stream line/);
    expect(error.message).not.toContain("oops");
    expect(error.logDetail).toMatch(/^\{"choices": \[oops \S*\[redacted\] x+$/);
    expect(error.logDetail).not.toContain("secret-key");
    expect(error.logDetail).toHaveLength(200);
    expect(fake.requests).toHaveLength(1);
  });

  it("fails on an error the server sends mid-stream before any text, and keeps the text when it comes after", async () => {
    const { fake, model } = await setup();
    const failure = { error: { message: "engine overloaded", type: "server_error", code: 500 } };
    fake.enqueue({ sse: [chunk({ role: "assistant", content: "" }), failure] });
    await expect(model.complete(ask({ stream: recorder().sink }))).rejects.toMatchObject({
      kind: "server",
      message: expect.stringMatching(/engine overloaded/),
    });
    fake.enqueue({ sse: [chunk({ content: "Partial" }), `event: error\ndata: ${JSON.stringify(failure)}\n\n`] });
    expect(await model.complete(ask({ stream: recorder().sink }))).toMatchObject({
      content: "Partial",
      interrupted: { kind: "server" },
    });
  });
});

describe("retries, deadlines and cancelling while streaming", () => {
  it("retries a 429 with its Retry-After and a 5xx with back-off, streaming each attempt", async () => {
    const waits: number[] = [];
    const { fake, model } = await setup({ maxRetries: 2, backoffMs: (retry) => (waits.push(retry), 1) });
    fake.enqueue({ status: 429, headers: { "retry-after": "0" } }, { status: 503 }, { text: "finally here" });
    const retries: unknown[] = [];
    const seen = recorder();
    const response = await model.complete(ask({ stream: seen.sink, onRetry: (retry) => retries.push(retry) }));
    expect(response.content).toBe("finally here");
    expect(seen.text()).toBe("finally here");
    expect(retries).toEqual([
      { attempt: 2, maxAttempts: 3, reason: expect.stringMatching(/rate limiting/) },
      { attempt: 3, maxAttempts: 3, reason: expect.stringMatching(/failed \(503\)/) },
    ]);
    expect(waits).toEqual([2]);
    expect(fake.requests.map((request) => request.stream)).toEqual([true, true, true]);
  });

  it("closes the HTTP request when the caller cancels mid-stream", async () => {
    const { fake, model } = await setup({}, { chunkDelayMs: 30 });
    fake.enqueue({ text: "word ".repeat(100) });
    const controller = new AbortController();
    const pending = model.complete(
      ask({ signal: controller.signal, stream: { onText: () => controller.abort(), onToolCall: () => undefined } }),
    );
    await expect(pending).rejects.toMatchObject({ kind: "timeout", message: expect.stringMatching(/cancelled/) });
    await vi.waitFor(() => expect(fake.requests[0]?.closedEarly).toBe(true));
    expect(fake.requests[0]?.chunksSent).toBeLessThan(10);
    expect(fake.requests).toHaveLength(1);
  });

  it("waits at most the timeout for each piece, not for the whole stream", async () => {
    const { fake, model } = await setup({ timeoutMs: 300 });
    // Slower than the timeout in total, never between two chunks.
    fake.enqueue({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 40 });
    expect((await model.complete(ask({ stream: recorder().sink }))).content).toMatch(/ten$/);

    // A stall before any text is a timeout (retried like one); after text, the text so far is the reply.
    fake.enqueue({ text: "never", chunkDelayMs: 5_000 });
    await expect(model.complete(ask({ stream: recorder().sink }))).rejects.toMatchObject({
      kind: "timeout",
      message: expect.stringMatching(/stopped sending/),
    });
    fake.enqueue({ sse: [chunk({ content: "Half an" }), chunk({ content: " answer" })], chunkDelayMs: 5_000 });
    expect(await model.complete(ask({ stream: recorder().sink }))).toMatchObject({
      content: "Half an",
      interrupted: { kind: "timeout" },
    });
    await vi.waitFor(() => expect(fake.requests.filter((request) => request.closedEarly)).toHaveLength(2));

    // A server that does not answer at all times out as today.
    fake.enqueue({ text: "late", delayMs: 1_000 });
    await expect(model.complete(ask({ stream: recorder().sink }))).rejects.toMatchObject({ kind: "timeout" });
  });
});
