import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/llm/model-errors.js";
import { createOpenAIChatModel, parseArguments } from "../../src/llm/openai-chat-model.js";
import { startFakeOpenAI } from "../fakes/openai-server.js";

async function setup() {
  const fake = await startFakeOpenAI();
  const model = createOpenAIChatModel({ baseURL: fake.url, apiKey: "k", model: "m", timeoutMs: 2_000, maxRetries: 0 });
  return { fake, model };
}

describe("OpenAI-compatible adapter", () => {
  it("generates ids for tool calls without one, keeps unparseable arguments as a parse error", async () => {
    const { fake, model } = await setup();
    fake.enqueue({
      toolCalls: [
        { name: "file_read", arguments: '{"path": "a"}', id: null },
        { name: "file_read", arguments: "not json", id: "" },
      ],
    });
    const response = await model.complete({ messages: [{ role: "user", content: "x" }], purpose: "react" });
    expect(response.toolCalls[0]).toMatchObject({
      id: expect.stringMatching(/^call_0_/),
      name: "file_read",
      arguments: { ok: true, value: { path: "a" } },
    });
    expect(response.toolCalls[1]).toMatchObject({
      id: expect.stringMatching(/^call_1_/),
      arguments: { ok: false, error: expect.stringMatching(/not valid JSON/) },
    });
    await fake.close();
  });

  it("reads reasoning_content (DeepSeek) and reasoning (vLLM), tolerates content null, and sends reasoning back with tool turns", async () => {
    const { fake, model } = await setup();
    fake.enqueue(
      {
        raw: {
          choices: [
            {
              message: {
                role: "assistant",
                content: null,
                reasoning_content: "thinking...",
                tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
              },
              finish_reason: "tool_calls",
            },
          ],
        },
      },
      {
        raw: {
          model: "m2",
          choices: [
            { message: { role: "assistant", content: "done", reasoning: "vllm thoughts" }, finish_reason: "stop" },
          ],
          usage: { prompt_tokens: 5, completion_tokens: 2 },
        },
      },
    );
    const first = await model.complete({ messages: [{ role: "user", content: "x" }], purpose: "react" });
    expect(first).toMatchObject({ content: null, reasoning: "thinking...", toolCalls: [{ id: "c1" }] });
    const second = await model.complete({
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: null, toolCalls: first.toolCalls, reasoning: "thinking..." },
        { role: "tool", toolCallId: "c1", content: "ok" },
      ],
      purpose: "react",
    });
    expect(second).toMatchObject({
      content: "done",
      reasoning: "vllm thoughts",
      usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 },
      model: "m2",
    });
    expect(fake.requests[1]?.messages[1]).toMatchObject({
      role: "assistant",
      content: null,
      reasoning_content: "thinking...",
      tool_calls: [{ id: "c1", function: { name: "t", arguments: "{}" } }],
    });
    expect(fake.requests[1]?.messages[2]).toEqual({ role: "tool", tool_call_id: "c1", content: "ok" });
    await fake.close();
  });

  it.each([
    [429, "rate_limit", true],
    [503, "server", true],
    [401, "auth", false],
    [400, "bad_request", false],
  ])("maps HTTP %i to %s", async (status, kind, transient) => {
    const { fake, model } = await setup();
    fake.enqueue({ status });
    const error = await model
      .complete({ messages: [{ role: "user", content: "x" }], purpose: "react" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind, status, transient });
    await fake.close();
  });

  it("maps an unreachable server to a connection error and a slow one to a timeout", async () => {
    const unreachable = createOpenAIChatModel({
      baseURL: "http://127.0.0.1:9/v1",
      model: "m",
      timeoutMs: 2_000,
      maxRetries: 0,
    });
    await expect(
      unreachable.complete({ messages: [{ role: "user", content: "x" }], purpose: "react" }),
    ).rejects.toMatchObject({ kind: "connection" });
    const { fake } = await setup();
    const slow = createOpenAIChatModel({ baseURL: fake.url, model: "m", timeoutMs: 200, maxRetries: 0 });
    fake.enqueue({ text: "late", delayMs: 1_000 });
    await expect(slow.complete({ messages: [{ role: "user", content: "x" }], purpose: "react" })).rejects.toMatchObject(
      { kind: "timeout" },
    );
    await fake.close();
  });

  it("retries transient failures itself, telling the caller before each retry, and honours a short Retry-After", async () => {
    const fake = await startFakeOpenAI();
    const waits: number[] = [];
    const model = createOpenAIChatModel({
      baseURL: fake.url,
      model: "m",
      timeoutMs: 2_000,
      maxRetries: 2,
      backoffMs: (retry) => (waits.push(retry), 1),
    });
    fake.enqueue({ status: 503 }, { status: 429, headers: { "retry-after": "0" } }, { text: "finally" });
    const retries: unknown[] = [];
    const response = await model.complete({
      messages: [{ role: "user", content: "x" }],
      purpose: "react",
      onRetry: (retry) => retries.push(retry),
    });
    expect(response.content).toBe("finally");
    expect(retries).toEqual([
      { attempt: 2, maxAttempts: 3, reason: expect.stringMatching(/failed \(503\)/) },
      { attempt: 3, maxAttempts: 3, reason: expect.stringMatching(/rate limiting/) },
    ]);
    // The 429 said how long to wait: only the 503 used the back-off.
    expect(waits).toEqual([1]);
    expect(fake.requests).toHaveLength(3);

    // A bad key will not get better: no retry, and the error says what to check.
    fake.enqueue({ status: 401 });
    const refused = await model
      .complete({
        messages: [{ role: "user", content: "x" }],
        purpose: "react",
        onRetry: (retry) => retries.push(retry),
      })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ kind: "auth", message: expect.stringMatching(/LLM_API_KEY/) });
    expect(fake.requests).toHaveLength(4);
    expect(retries).toHaveLength(2);
    await fake.close();
  });

  it("stops retrying when the caller cancels", async () => {
    const fake = await startFakeOpenAI();
    const model = createOpenAIChatModel({
      baseURL: fake.url,
      model: "m",
      timeoutMs: 2_000,
      maxRetries: 5,
      backoffMs: () => 60_000,
    });
    fake.respond(() => ({ status: 503 }));
    const controller = new AbortController();
    const pending = model.complete({
      messages: [{ role: "user", content: "x" }],
      purpose: "react",
      signal: controller.signal,
      onRetry: () => controller.abort(),
    });
    await expect(pending).rejects.toBeInstanceOf(ModelError);
    expect(fake.requests).toHaveLength(1);
    await fake.close();
  });

  it("parses argument text leniently", () => {
    expect(parseArguments("")).toEqual({ ok: true, value: {} });
    expect(parseArguments('```json\n{"a":1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArguments("[1]")).toEqual({ ok: false, error: "arguments must be a JSON object" });
  });
});
