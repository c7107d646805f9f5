import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { BoundedMessageReader } from "../../src/toolhost/bounded-reader.js";

function frame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
}

function reader(maxFrameBytes = 1024 * 1024) {
  const stream = new PassThrough();
  const messages: unknown[] = [];
  const errors: string[] = [];
  let closed = false;
  const bounded = new BoundedMessageReader(stream, maxFrameBytes);
  bounded.onError((error) => errors.push(error.message));
  bounded.onClose(() => (closed = true));
  bounded.listen((message) => messages.push(message));
  return { stream, messages, errors, closed: () => closed };
}

describe("bounded message reader", () => {
  it("delivers 1,000 frames written in one chunk, all and in order", () => {
    const { stream, messages } = reader();
    stream.write(
      Buffer.concat(
        Array.from({ length: 1000 }, (_, index) => frame({ jsonrpc: "2.0", method: "n", params: { index } })),
      ),
    );
    expect(messages).toHaveLength(1000);
    expect(messages.map((message) => (message as { params: { index: number } }).params.index)).toEqual(
      Array.from({ length: 1000 }, (_, index) => index),
    );
  });

  it("delivers a frame written one byte at a time, with multi-byte characters split across chunks", () => {
    const { stream, messages } = reader();
    for (const byte of frame({ jsonrpc: "2.0", method: "n", params: { text: "héllo 世界 🎉" } }))
      stream.write(Buffer.from([byte]));
    expect(messages).toEqual([{ jsonrpc: "2.0", method: "n", params: { text: "héllo 世界 🎉" } }]);
  });

  it.each([
    ["an oversized Content-Length", Buffer.from("Content-Length: 999999999\r\n\r\n{"), /exceeds the maximum/],
    ["a malformed header", Buffer.from("Content-Length 12\r\n\r\n{}"), /malformed header/],
    ["a body that is not JSON", Buffer.from("Content-Length: 3\r\n\r\nabc"), /not JSON/],
    ["bytes without a header", Buffer.alloc(16 * 1024, 0x41), /no header end/],
  ])("%s is an error that closes the reader", (_label, bytes, pattern) => {
    const { stream, messages, errors, closed } = reader(1024 * 1024);
    stream.write(bytes);
    stream.write(frame({ jsonrpc: "2.0", method: "after" }));
    expect(errors[0]).toMatch(pattern);
    expect(closed()).toBe(true);
    expect(messages).toEqual([]);
  });
});
