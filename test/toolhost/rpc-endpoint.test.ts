import { PassThrough, Writable } from "node:stream";
import {
  CancellationTokenSource,
  createMessageConnection,
  ResponseError,
  type CancellationToken,
} from "vscode-jsonrpc/node";
import { describe, expect, it } from "vitest";
import { BoundedMessageReader } from "../../src/toolhost/bounded-reader.js";
import { frameText, FramedMessageWriter } from "../../src/toolhost/framed-writer.js";
import { CONNECTION_DISPOSED, createRpcClient, type RpcClient } from "../../src/toolhost/client/rpc-client.js";
import { createRpcEndpoint } from "../../src/toolhost/server/rpc-endpoint.js";

/** The child's endpoint on one pair of streams, a vscode-jsonrpc connection (the parent's library) on the other. */
function connected() {
  const toChild = new PassThrough();
  const toParent = new PassThrough();
  const warnings: string[] = [];
  const endpoint = createRpcEndpoint(
    new BoundedMessageReader(toChild, 1 << 20),
    new FramedMessageWriter(toParent, { batch: "none" }),
    { warn: (message) => warnings.push(message) },
  );
  const parent = createMessageConnection(
    new BoundedMessageReader(toParent, 1 << 20),
    new FramedMessageWriter(toChild, { batch: "tick" }),
  );
  parent.listen();
  return { endpoint, parent, toChild, warnings };
}

describe("the child's JSON-RPC endpoint", () => {
  it("answers vscode-jsonrpc requests; a thrown ResponseError keeps its code, any other error is an internal error, an unknown method is said so", async () => {
    const { endpoint, parent } = connected();
    endpoint.onRequest(
      "add",
      (params) => (params as { a: number; b: number }).a + (params as { a: number; b: number }).b,
    );
    endpoint.onRequest("later", async () => ({ done: true }));
    endpoint.onRequest("refuse", () => {
      throw new ResponseError(-32602, "bad params here");
    });
    endpoint.onRequest("break", () => Promise.reject(new Error("disk on fire")));
    endpoint.listen();
    await expect(parent.sendRequest("add", { a: 2, b: 3 })).resolves.toBe(5);
    await expect(parent.sendRequest("later", {})).resolves.toEqual({ done: true });
    await expect(parent.sendRequest("refuse", {})).rejects.toMatchObject({ code: -32602, message: "bad params here" });
    await expect(parent.sendRequest("break", {})).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("disk on fire"),
    });
    await expect(parent.sendRequest("nope", {})).rejects.toMatchObject({ code: -32601 });
    parent.dispose();
    endpoint.dispose();
  });

  it("takes a chunk's requests in order: one that needs no waiting is answered before the next starts, one that waits holds nothing back", async () => {
    const toChild = new PassThrough();
    const events: string[] = [];
    const toParent = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        events.push(`write ${/"id":(\d)/.exec(chunk.toString("utf8"))?.[1]}`);
        done();
      },
    });
    const endpoint = createRpcEndpoint(
      new BoundedMessageReader(toChild, 1 << 20),
      new FramedMessageWriter(toParent, { batch: "none" }),
      { warn: () => undefined },
    );
    let release: (() => void) | undefined;
    endpoint.onRequest("wait", (params) => {
      events.push(`start ${(params as { n: number }).n}`);
      return new Promise((resolve) => (release = () => resolve("waited")));
    });
    endpoint.onRequest("now", (params) => {
      events.push(`start ${(params as { n: number }).n}`);
      return "now";
    });
    endpoint.listen();
    const frame = (n: number, method: string) =>
      Buffer.from(frameText({ jsonrpc: "2.0", id: n, method, params: { n } } as never));
    toChild.write(Buffer.concat([frame(1, "wait"), frame(2, "now"), frame(3, "now")]));
    // The chunk is taken in the turn it arrives: 2 and 3 answered, each in a write of its own, before the next request starts.
    expect(events).toEqual(["start 1", "start 2", "write 2", "start 3", "write 3"]);
    release?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.slice(5)).toEqual(["write 1"]);
    endpoint.dispose();
  });

  it("the parent's writer puts the messages of one tick in one write; the child's writes each at once", async () => {
    const writes = (batch: "tick" | "none") => {
      const calls: number[] = [];
      const stream = new Writable({
        write: (_chunk, _encoding, done) => (calls.push(1), done()),
        writev: (chunks, done) => (calls.push(chunks.length), done()),
      });
      const writer = new FramedMessageWriter(stream, { batch });
      for (const id of [1, 2, 3]) void writer.write({ jsonrpc: "2.0", id, method: "m" } as never);
      return calls;
    };
    const batched = writes("tick");
    expect(batched).toEqual([]);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(batched).toEqual([3]);
    expect(writes("none")).toEqual([1, 1, 1]);
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
    toChild.write(Buffer.from(frameText({ jsonrpc: "2.0", method: "window/log", params: {} } as never)));
    toChild.write(Buffer.from(frameText({ jsonrpc: "2.0", id: 9, result: 1 } as never)));
    toChild.end();
    await expect.poll(() => closes).toBe(1);
    expect(warnings).toEqual([
      "notification window/log ignored",
      "a message that is not a request or a notification was ignored",
    ]);
    endpoint.dispose();
    expect(closes).toBe(1);
  });
});

describe("the parent's JSON-RPC client", () => {
  /** A request as a promise, with its id for cancel. */
  function ask(client: RpcClient, method: string, params: unknown): { id: number; answer: Promise<unknown> } {
    let id = 0;
    const answer = new Promise((resolve, reject) => {
      id = client.request(method, params, (error, result) => (error ? reject(error) : resolve(result)));
    });
    return { id, answer };
  }

  function paired() {
    const toChild = new PassThrough();
    const toParent = new PassThrough();
    const endpoint = createRpcEndpoint(
      new BoundedMessageReader(toChild, 1 << 20),
      new FramedMessageWriter(toParent, { batch: "none" }),
      { warn: () => undefined },
    );
    const client = createRpcClient(
      new BoundedMessageReader(toParent, 1 << 20),
      new FramedMessageWriter(toChild, { batch: "tick" }),
      { warn: () => undefined },
    );
    client.listen();
    return { endpoint, client, toParent };
  }

  it("settles answers and errors, and a cancel reaches the child's handler as its token", async () => {
    const { endpoint, client } = paired();
    endpoint.onRequest("echo", (params) => params);
    endpoint.onRequest("refuse", () => {
      throw new ResponseError(-32602, "no");
    });
    endpoint.onRequest(
      "slow",
      (_params, token) => new Promise((resolve) => token.onCancellationRequested(() => resolve("stopped"))),
    );
    endpoint.listen();
    await expect(ask(client, "echo", { a: 1 }).answer).resolves.toEqual({ a: 1 });
    await expect(ask(client, "refuse", {}).answer).rejects.toMatchObject({ code: -32602, message: "no" });
    const slow = ask(client, "slow", {});
    await new Promise((resolve) => setImmediate(resolve));
    client.cancel(slow.id);
    await expect(slow.answer).resolves.toBe("stopped");
    endpoint.dispose();
    client.dispose();
  });

  it("a handler of an answer that throws is the caller's bug: warned, and the other answers still arrive", async () => {
    const toChild = new PassThrough();
    const toParent = new PassThrough();
    const warnings: string[] = [];
    const endpoint = createRpcEndpoint(
      new BoundedMessageReader(toChild, 1 << 20),
      new FramedMessageWriter(toParent, { batch: "none" }),
      { warn: () => undefined },
    );
    const client = createRpcClient(
      new BoundedMessageReader(toParent, 1 << 20),
      new FramedMessageWriter(toChild, { batch: "tick" }),
      { warn: (message) => warnings.push(message) },
    );
    client.listen();
    endpoint.onRequest("echo", (params) => params);
    endpoint.listen();
    client.request("echo", { n: 1 }, () => {
      throw new Error("caller bug");
    });
    const second = ask(client, "echo", { n: 2 });
    await expect(second.answer).resolves.toEqual({ n: 2 });
    expect(warnings).toEqual([expect.stringContaining("caller bug")]);
    await expect(ask(client, "echo", { n: 3 }).answer).resolves.toEqual({ n: 3 });
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
    const calls = [1, 2, 3].map((n) => ask(client, "wait", { n }).answer.then(() => settledAt.push(tick)));
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
    const waiting = ask(client, "never", {}).answer;
    await new Promise((resolve) => setImmediate(resolve));
    let closed = false;
    client.onClose(() => (closed = true));
    toParent.end();
    await expect.poll(() => closed).toBe(true);
    expect(() => client.request("never", {}, () => undefined)).toThrow(/closed/);
    client.dispose();
    await expect(waiting).rejects.toMatchObject({ code: CONNECTION_DISPOSED });
    endpoint.dispose();
  });
});
