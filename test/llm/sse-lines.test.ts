import { describe, expect, it } from "vitest";
import { type SseEvent, sseEvents, splitLines } from "../../src/llm/sse-lines.js";

async function eventsOf(...parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  async function* chunks() {
    for (const part of parts) yield typeof part === "string" ? new TextEncoder().encode(part) : part;
  }
  const events: SseEvent[] = [];
  for await (const event of sseEvents(chunks())) events.push(event);
  return events;
}

describe("server-sent events", () => {
  it("reads data lines split anywhere across reads, with any line ending, skipping comments", async () => {
    const events = await eventsOf(
      ": keep-alive\r\n\r\nda",
      'ta: {"a":1}\r',
      '\n\r\ndata: {"b":2}\r\rdata:[DONE]\n',
      "\n",
    );
    expect(events.map((event) => event.data)).toEqual(['{"a":1}', '{"b":2}', "[DONE]"]);
    expect(events.every((event) => event.complete)).toBe(true);
  });

  it("keeps a character whose bytes arrive in two reads whole", async () => {
    const bytes = new TextEncoder().encode('data: {"t":"你好🙂"}\n\n');
    const events = await eventsOf(bytes.slice(0, 14), bytes.slice(14, 19), bytes.slice(19));
    expect(JSON.parse(events[0]?.data ?? "")).toEqual({ t: "你好🙂" });
  });

  it("joins the data lines of one event, keeps the event name, and splits whole JSON lines a server forgot to separate", async () => {
    const events = await eventsOf("event: error\ndata: first\ndata: second\n\n", 'data: {"x":1}\ndata: {"y":2}\n\n');
    expect(events).toEqual([
      { data: "first\nsecond", event: "error", complete: true },
      { data: '{"x":1}', event: undefined, complete: true },
      { data: '{"y":2}', event: undefined, complete: true },
    ]);
  });

  it("hands over an event the body ended inside, marked incomplete", async () => {
    expect(await eventsOf('data: {"a":1}\n\ndata: {"cut')).toEqual([
      { data: '{"a":1}', event: undefined, complete: true },
      { data: '{"cut', event: undefined, complete: false },
    ]);
    expect(await eventsOf("data: [DONE]")).toEqual([{ data: "[DONE]", event: undefined, complete: false }]);
  });

  it("holds back a carriage return that may still get its line feed", () => {
    expect(splitLines("a\r\nb\r", false)).toEqual({ lines: ["a"], rest: "b\r" });
    expect(splitLines("a\r\nb\r", true)).toEqual({ lines: ["a", "b"], rest: "" });
  });
});
