/**
 * A child that goes quiet after a burst collects its garbage once (every agent holds a
 * child, so a burst's garbage kept for many seconds is memory paid per agent), and not
 * again until it has served more. The real child's loop, in this process, with its check
 * interval on fake timers.
 */
import { PassThrough } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BoundedMessageReader } from "../../src/toolhost/bounded-reader.js";
import { createRpcClient } from "../../src/toolhost/client/rpc-client.js";
import { FramedMessageWriter } from "../../src/toolhost/framed-writer.js";
import { parseStartupMessage } from "../../src/toolhost/sandbox/startup-message.js";
import { runToolhostChild } from "../../src/toolhost/server/child-main.js";
import { realWorkspace } from "../helpers/real-toolhost.js";

afterEach(() => void vi.useRealTimers());

describe("the child's collection after a burst", () => {
  it("runs once when the child has been quiet for a check interval after tool calls, again only after more, never for heartbeats", async () => {
    const workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none" });
    // The start-up message the launch carries (jailed or not, the child reads the same one).
    const startup = parseStartupMessage(JSON.stringify(workspace.launches().agents.get("a")?.startup));
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const toChild = new PassThrough();
    const fromChild = new PassThrough();
    let collections = 0;
    const exited = runToolhostChild({
      startup,
      logger: pino({ level: "silent" }),
      stdin: toChild,
      stdout: fromChild,
      collectGarbage: () => (collections += 1),
    });
    const client = createRpcClient(
      new BoundedMessageReader(fromChild, 1 << 20),
      new FramedMessageWriter(toChild, { batch: "tick" }),
      { warn: () => undefined },
    );
    client.listen();
    const ask = (method: string, params: unknown) =>
      new Promise((resolve, reject) =>
        client.request(method, params, (error, result) => (error ? reject(error) : resolve(result))),
      );
    const list = () => ask("tool.call", { name: "file.list", args: { path: "." } });

    await Promise.all([ask("ping", {}), ask("ping", {})]);
    vi.advanceTimersByTime(2_000);
    expect(collections, "heartbeats are not a burst").toBe(0);
    await expect(Promise.all([list(), list(), list()])).resolves.toMatchObject([
      { ok: true },
      { ok: true },
      { ok: true },
    ]);
    vi.advanceTimersByTime(500);
    expect(collections, "calls ran during the last interval: not quiet yet").toBe(0);
    vi.advanceTimersByTime(500);
    expect(collections).toBe(1);
    await ask("ping", {});
    vi.advanceTimersByTime(5_000);
    expect(collections, "no new tool calls: no new collection").toBe(1);
    await list();
    vi.advanceTimersByTime(1_000);
    expect(collections).toBe(2);

    toChild.end();
    await expect(exited).resolves.toBe(0);
    client.dispose();
  });
});
