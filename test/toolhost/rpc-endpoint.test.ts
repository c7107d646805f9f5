import { PassThrough, Writable } from "node:stream";
import { CancellationTokenSource, createMessageConnection, ResponseError, type CancellationToken } from "vscode-jsonrpc/node";
import { describe, expect, it } from "vitest";
import { BoundedMessageReader } from "../../src/toolhost/bounded-reader.js";
import { encodeFrame, FramedMessageWriter } from "../../src/toolhost/framed-writer.js";
import { CONNECTION_DISPOSED, createRpcClient } from "../../src/toolhost/client/rpc-client.js";
import { createRpcEndpoint } from "../../src/toolhost/server/rpc-endpoint.js";

/** The child's endpoint on one pair of streams, a vscode-jsonrpc connection (the parent's library) on the other. */
function connected() {
  const toChild = new PassThrough();
  const toParent = new PassThrough();
  const warnings: string[] = [];
  const endpoint = createRpcEndpoint(new BoundedMessageReader(toChild, 1 << 20), new FramedMessageWriter(toParent), { warn: (message) => warnings.push(message) });
  const parent = createMessageConnection(new BoundedMessageReader(toParent, 1 << 20), new FramedMessageWriter(toChild));
  parent.listen();
  return { endpoint, parent, toChild, warnings };
}

describe("the child's JSON-RPC endpoint", () => {
  it("answers vscode-jsonrpc requests; a thrown ResponseError keeps its code, any other error is an internal error, an unknown method is said so", async () => {
    const { endpoint, parent } = connected();
    endpoint.onRequest("add", (params) => (params as { a: number; b: number }).a + (params as { a: number; b: number }).b);
    endpoint.onRequest("later", async () => ({ done: true }));
    endpoint.onRequest("refuse", () => {
      throw new ResponseError(-32602, "bad params here");
    });
    endpoint.onRequest("break", () => Promise.reject(new Error("disk on fire")));
    endpoint.listen();
    await expect(parent.sendRequest("add", { a: 2, b: 3 })).resolves.toBe(5);
    await expect(parent.sendRequest("later", {})).resolves.toEqual({ done: true });
    await expect(parent.sendRequest("refuse", {})).rejects.toMatchObject({ code: -32602, message: "bad params here" });
    await expect(parent.sendRequest("break", {})).rejects.toMatchObject({ code: -32603, message: expect.stringContaining("disk on fire") });
    await expect(parent.sendRequest("nope", {})).rejects.toMatchObject({ code: -32601 });
    parent.dispose();
    endpoint.dispose();
  });

  it("starts every request of a chunk before any answer goes out, and the answers leave in one write", async () => {
    const toChild = new PassThrough();
    const writes: Buffer[][] = [];
    const toParent = new Writable({
      write: (chunk: Buffer, _encoding, done) => (writes.push([chunk]), done()),
      writev: (chunks, done) => (writes.push(chunks.map((entry) => entry.chunk as Buffer)), done()),
    });
    const endpoint = createRpcEndpoint(new BoundedMessageReader(toChild, 1 << 20), new FramedMessageWriter(toParent), { warn: () => undefined });
    const started: number[] = [];
    const release: Array<() => void> = [];
    endpoint.onRequest("wait", (params) => {
      started.push((params as { n: number }).n);
      return new Promise((resolve) => release.push(() => resolve((params as { n: number }).n)));
    });
    endpoint.listen();
    toChild.write(Buffer.concat([1, 2, 3].map((n) => encodeFrame({ jsonrpc: "2.0", id: n, method: "wait", params: { n } } as never))));
    expect(started).toEqual([1, 2, 3]);
    expect(writes).toHaveLength(0);
    for (const resolve of release) resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    const text = Buffer.concat(writes[0] ?? []).toString("utf8");
    expect(text.match(/Content-Length: \d+\r\n\r\n/g)).toHaveLength(3);
    expect([...text.matchAll(/"id":(\d)/g)].map((match) => Number(match[1]))).toEqual([1, 2, 3]);
    endpoint.dispose();
  });

  it("$/cancelRequest cancels the running request's token, and dispose cancels the rest", async () => {
    const { endpoint, parent } = connected();
    const tokens: CancellationToken[] = [];
    endpoint.onRequest("slow", (_params, token) => {
      tokens.push(token);
      return new Promise((resolve) => token.onCancellationRequested(() => resolve("stopped")));
    });
    endpoint.listen();
    const source = new CancellationTokenSource();
    const answer = parent.sendRequest("slow", {}, source.token);
    void parent.sendRequest("slow", {}).catch(() => undefined);
    await expect.poll(() => tokens.length).toBe(2);
    source.cancel();
    await expect(answer).resolves.toBe("stopped");
    expect(tokens[1]?.isCancellationRequested).toBe(false);
    endpoint.dispose();
    expect(tokens[1]?.isCancellationRequested).toBe(true);
    parent.dispose();
  });

  it("closes once when its input ends, and warns about messages it does not serve", async () => {
    const { endpoint, toChild, warnings } = connected();
    let closes = 0;
    endpoint.onClose(() => (closes += 1));
    endpoint.listen();
    toChild.write(encodeFrame({ jsonrpc: "2.0", method: "window/log", params: {} } as never));
    toChild.write(encodeFrame({ jsonrpc: "2.0", id: 9, result: 1 } as never));
    toChild.end();
    await expect.poll(() => closes).toBe(1);
    expect(warnings).toEqual(["notification window/log ignored", "a message that is not a request or a notification was ignored"]);
    endpoint.dispose();
    expect(closes).toBe(1);
  });
});

describe("the parent's JSON-RPC client", () => {
  function paired() {
    const toChild = new PassThrough();
    const toParent = new PassThrough();
    const endpoint = createRpcEndpoint(new BoundedMessageReader(toChild, 1 << 20), new FramedMessageWriter(toParent), { warn: () => undefined });
    const client = createRpcClient(new BoundedMessageReader(toParent, 1 << 20), new FramedMessageWriter(toChild), { warn: () => undefined });
    client.listen();
    return { endpoint, client, toParent };
  }

  it("settles answers and errors, and a cancelled token reaches the child's handler", async () => {
    const { endpoint, client } = paired();
    endpoint.onRequest("echo", (params) => params);
    endpoint.onRequest("refuse", () => {
      throw new ResponseError(-32602, "no");
    });
    endpoint.onRequest("slow", (_params, token) => new Promise((resolve) => token.onCancellationRequested(() => resolve("stopped"))));
    endpoint.listen();
    await expect(client.sendRequest("echo", { a: 1 })).resolves.toEqual({ a: 1 });
    await expect(client.sendRequest("refuse", {})).rejects.toMatchObject({ code: -32602, message: "no" });
    const source = new CancellationTokenSource();
    const slow = client.sendRequest("slow", {}, source.token);
    await new Promise((resolve) => setImmediate(resolve));
    source.cancel();
    await expect(slow).resolves.toBe("stopped");
    endpoint.dispose();
    client.dispose();
  });

  it("every answer of a chunk settles in the same tick", async () => {
    const { endpoint, client } = paired();
    const release: Array<() => void> = [];
    endpoint.onRequest("wait", (params) => new Promise((resolve) => release.push(() => resolve(params))));
    endpoint.listen();
    const settledAt: number[] = [];
    let tick = 0;
    const calls = [1, 2, 3].map((n) => client.sendRequest("wait", { n }).then(() => settledAt.push(tick)));
    await expect.poll(() => release.length).toBe(3);
    for (const resolve of release) resolve();
    // A turn of the event loop per tick: vscode-jsonrpc's connection would settle them a turn apart.
    let ticking = true;
    const turn = () => {
      tick += 1;
      if (ticking) setImmediate(turn);
    };
    setImmediate(turn);
    await Promise.all(calls);
    ticking = false;
    expect(new Set(settledAt).size).toBe(1);
    endpoint.dispose();
    client.dispose();
  });

  it("after the input closes a request throws at once; dispose rejects the waiting ones with -32097", async () => {
    const { endpoint, client, toParent } = paired();
    endpoint.onRequest("never", () => new Promise(() => undefined));
    endpoint.listen();
    const waiting = client.sendRequest("never", {});
    await new Promise((resolve) => setImmediate(resolve));
    let closed = false;
    client.onClose(() => (closed = true));
    toParent.end();
    await expect.poll(() => closed).toBe(true);
    expect(() => client.sendRequest("never", {})).toThrow(/closed/);
    client.dispose();
    await expect(waiting).rejects.toMatchObject({ code: CONNECTION_DISPOSED });
    endpoint.dispose();
  });
});
