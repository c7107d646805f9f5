/**
 * The resilience outcomes of TOOLHOST.md, against fixture children that misbehave on
 * purpose (test/fixtures/toolhost/misbehaving-child.mjs). The real child's outcomes
 * (noisy stdout, hung tools, parent death, huge output) are in real-child.test.ts.
 */
import { describe, expect, it } from "vitest";
import { readsOnly, type AuditTrail } from "../../src/toolhost/client/toolhost-client.js";
import { isAlive, makeClient, openFdCount, spawnFixture, waitFor } from "../helpers/toolhost.js";

const echo = (args: Record<string, unknown> = {}) => ({ name: "file.read", args });

/** Blocks the event loop (bounded) while `condition` holds, so events pile up behind it. */
function holdLoopWhile(condition: () => boolean): void {
  const deadline = Date.now() + 5_000;
  while (condition() && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
}

describe("1. broken frames from the child", () => {
  it.each(["malformed-header", "not-json", "oversized", "headerless-flood"])(
    "%s: in-flight calls reject, the child is killed and restarted, memory stays bounded",
    async (mode) => {
      const { client, supervisor, spawns } = makeClient({ mode, maxFrameBytes: 1024 * 1024 });
      await client.ping();
      const firstPid = supervisor.pid;
      const heapBefore = process.memoryUsage().heapUsed;
      const result = await client.callTool({ name: "shell.exec", args: { command: "x" } });
      expect(result).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
      if (!result.ok) expect(result.error.reason).toMatch(/protocol error/);
      await waitFor(() => !isAlive(firstPid), 5_000, "the broken child to die");
      await waitFor(() => supervisor.state === "running" && supervisor.pid !== firstPid, 5_000, "a restart");
      expect(spawns.length).toBe(2);
      // The flood is 64 MiB and the lie claims 1 GiB; neither may be buffered.
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024);
    },
  );

  it("a lying Content-Length followed by the child's exit: the call fails, nothing hangs", async () => {
    const { client } = makeClient({ mode: "lying-length" });
    const result = await client.callTool({ name: "shell.exec", args: {} });
    expect(result).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
  });
});

describe("2. framing", () => {
  it("a frame delivered one byte at a time with split multi-byte characters arrives intact", async () => {
    const { client } = makeClient({ mode: "split-utf8" });
    expect(await client.callTool(echo())).toEqual({ ok: true, output: "héllo 世界 🎉", truncated: false });
  });

  it("1,000 frames in one chunk are all delivered, in order", async () => {
    const { client } = makeClient({ mode: "many-frames" });
    expect(await client.callTool(echo())).toEqual({ ok: true, output: "after 1000 frames", truncated: false });
  });
});

describe("3. odd responses", () => {
  it("a response with neither result nor error is rejected cleanly; others are unaffected", async () => {
    const { client } = makeClient({ mode: "bad-responses" });
    const [empty, plain] = await Promise.all([
      client.callTool(echo({ tag: "empty" })),
      client.callTool(echo({ tag: "a" })),
    ]);
    expect(empty.ok).toBe(false);
    expect(plain).toEqual({ ok: true, output: "plain a", truncated: false });
  });

  it("unknown and duplicate ids are ignored", async () => {
    const { client, supervisor } = makeClient({ mode: "bad-responses" });
    expect(await client.callTool(echo({ tag: "unknown-id" }))).toMatchObject({ ok: true, output: "after unknown id" });
    // vscode-jsonrpc keys queued responses by id: one of the two wins, the other is dropped.
    const duplicate = await client.callTool(echo({ tag: "duplicate" }));
    expect(duplicate.ok && ["first", "second"].includes(duplicate.output)).toBe(true);
    expect(await client.callTool(echo({ tag: "b" }))).toMatchObject({ ok: true, output: "plain b" });
    expect(supervisor.state).toBe("running");
  });
});

describe("4. child killed with calls in flight", () => {
  it.each([
    ["SIGKILL", { kill: true, exitAfterMs: 100 }],
    ["process.exit", { exit: 7, exitAfterMs: 100 }],
  ])(
    "%s: all in-flight calls reject at the exit with TOOLHOST_CRASHED, not at their deadline",
    async (_label, killer) => {
      // The deadline is far away: TOOLHOST_CRASHED rather than TIMEOUT proves the rejection came
      // from the exit. How soon after the exit is measured by the toolhost benchmark.
      const { client, supervisor } = makeClient({ callTimeoutMs: 20_000, concurrency: 8 });
      await client.ping();
      const pid = supervisor.pid;
      const calls = [
        client.callTool({ name: "file.write", args: { hang: true } }),
        client.callTool({ name: "file.write", args: { hang: true, n: 2 } }),
        client.callTool({ name: "shell.exec", args: { hang: true } }),
        client.callTool({ name: "file.edit", args: { hang: true } }),
        client.callTool({ name: "shell.exec", args: { ...killer } }),
      ];
      await waitFor(() => !isAlive(pid), 5_000, "the child to die");
      // A call sent in the instant between the death and the exit event would reach the dying
      // child (and fail); this one is made once the supervisor has seen the exit.
      await waitFor(() => supervisor.pid !== pid, 5_000, "the supervisor to see the exit");
      const lateCall = client.callTool({ name: "file.write", args: {} });
      const results = await Promise.all(calls);
      for (const result of results) expect(result).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
      expect(results).toHaveLength(5);
      // A call made after the crash waits for the restarted child, never the dead one.
      const late = await lateCall;
      expect(late.ok).toBe(true);
      if (late.ok) expect(JSON.parse(late.output).pid).not.toBe(pid);
    },
  );

  it("read-only calls are retried once after the restart; writes and shell never", async () => {
    const { client, spawns } = makeClient();
    await client.ping();
    // Calls answered before the crash are untouched by it.
    const answered = await Promise.all([
      client.callTool({ name: "file.read", args: { path: "x" } }),
      client.callTool({ name: "file.write", args: { path: "x", content: "y" } }),
      client.callTool({ name: "shell.exec", args: { command: "ls" } }),
    ]);
    expect(answered.map((result) => result.ok)).toEqual([true, true, true]);
    // Calls in flight when the child is killed: the read is retried on the new child.
    const slowRead = client.callTool({ name: "file.grep", args: { sleepMs: 2_000 } });
    const slowWrite = client.callTool({ name: "file.write", args: { sleepMs: 2_000 } });
    const slowShell = client.callTool({ name: "shell.exec", args: { sleepMs: 2_000 } });
    await waitFor(() => client.load.running === 3, 5_000, "the three calls to be sent");
    spawns[0]?.kill("SIGKILL");
    // Hold the loop until the child is a zombie, so its exit and the end of its pipe reach
    // the client together: the retry must wait for the restart in either order.
    holdLoopWhile(() => isAlive(spawns[0]?.pid));
    const retried = await slowRead;
    expect(retried).toMatchObject({ ok: true });
    if (retried.ok) expect(JSON.parse(retried.output).pid).toBe(spawns[1]?.pid);
    expect(await slowWrite).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(await slowShell).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(spawns).toHaveLength(2);
  });
});

describe("5. start-up failures", () => {
  it("a child that exits during start-up: start rejects, the crash is counted, back-off applies", async () => {
    const { client, supervisor, spawns } = makeClient({
      mode: "exit-on-start",
      restart: { maxCrashes: 3, baseDelayMs: 30, maxDelayMs: 30 },
    });
    const first = await client.callTool({ name: "file.read", args: {} });
    expect(first).toMatchObject({ ok: false, error: { code: "TOOLHOST_UNAVAILABLE" } });
    expect(["backoff", "starting", "failed"]).toContain(supervisor.state);
    await waitFor(() => supervisor.state === "failed", 5_000, "the failed state");
    expect(spawns).toHaveLength(3);
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE", reason: expect.stringMatching(/crashed 3 times/) },
    });
  });

  it("a child that cannot be spawned: no unhandled error event, a clear TOOLHOST_UNAVAILABLE", async () => {
    const { spawn } = await import("node:child_process");
    const { client } = makeClient({
      spawn: () => spawn("/nonexistent/laoding-toolhost", [], { stdio: ["pipe", "pipe", "pipe"] }),
      restart: { maxCrashes: 2 },
    });
    const result = await client.callTool({ name: "file.read", args: {} });
    expect(result).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE", reason: expect.stringMatching(/ENOENT/) },
    });
  });
});

describe("6. restart storm", () => {
  it("restarts stop at the limit, calls fail fast, a later probe restores service, nothing leaks", async () => {
    let mode = "die-after-50ms";
    // The cool-down is read from this clock: the test moves it instead of waiting.
    let now = 1_000_000;
    const clock = { now: () => now };
    const { client, supervisor, spawns } = makeClient({
      spawn: () => spawnFixture(mode),
      clock,
      restart: { maxCrashes: 4, baseDelayMs: 5, maxDelayMs: 20, coolDownMs: 60_000, windowMs: 60_000 },
    });
    const fdsBefore = openFdCount();
    // The first child may die before it answers: the storm starts either way.
    await client.ping().catch(() => undefined);
    expect(await supervisor.whenState((state) => state === "failed", 10_000)).toBe("failed");
    expect(spawns).toHaveLength(4);
    // Fail fast: UNAVAILABLE, not a TIMEOUT after waiting for the call deadline, and no spawn.
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE" },
    });
    expect(spawns).toHaveLength(4);
    await waitFor(
      () => spawns.every((child) => child.exitCode !== null || child.signalCode !== null),
      5_000,
      "every stormed child to be reaped",
    );
    mode = "normal";
    // Still cooling down a minute less one millisecond later; then the next call probes.
    now += 59_999;
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE" },
    });
    now += 1;
    expect(await client.callTool({ name: "file.read", args: { probe: 1 } })).toMatchObject({ ok: true });
    expect(spawns).toHaveLength(5);
    expect(openFdCount()).toBeLessThanOrEqual(fdsBefore + 4);
  });
});

describe("8. hung child event loop", () => {
  it("heartbeats miss, the child is killed and restarted, in-flight calls reject", async () => {
    // Heartbeats tight enough to see the hang soon, loose enough that a loaded CI machine
    // does not also kill the restarted child before the retried read reaches it.
    const { client, supervisor } = makeClient({ heartbeatMs: 300, callTimeoutMs: 20_000 });
    await client.ping();
    const pid = supervisor.pid;
    const other = client.callTool({ name: "file.read", args: { sleepMs: 300 } });
    const spinning = client.callTool({ name: "shell.exec", args: { spin: true } });
    expect(await spinning).toMatchObject({ ok: false, error: { code: "TOOLHOST_CRASHED" } });
    expect(isAlive(pid)).toBe(false);
    // The read was in flight too; it is retried on the restarted child.
    expect(await other).toMatchObject({ ok: true });
    expect(supervisor.pid).not.toBe(pid);
  });
});

describe("9-10. concurrency", () => {
  it("heartbeats are answered while every slot is busy: no false restart", async () => {
    // Both slots stay busy for four heartbeat periods: queued behind them, pings would miss.
    const { client, supervisor, spawns } = makeClient({ heartbeatMs: 250, concurrency: 2, queueMax: 4 });
    await client.ping();
    const busy = [
      client.callTool({ name: "file.read", args: { sleepMs: 1_000 } }),
      client.callTool({ name: "file.read", args: { sleepMs: 1_000 } }),
    ];
    await Promise.all(busy);
    expect(spawns).toHaveLength(1);
    expect(supervisor.state).toBe("running");
  });

  it("at most the limit run at once; the rest queue; past the queue bound a call is refused at once", async () => {
    const { client } = makeClient({ concurrency: 2, queueMax: 3 });
    await client.ping();
    const calls = Array.from({ length: 5 }, () => client.callTool({ name: "file.read", args: { sleepMs: 600 } }));
    await waitFor(() => client.load.running === 2 && client.load.queued === 3, 5_000, "two running and three queued");
    const refused = await client.callTool({ name: "file.read", args: {} });
    expect(refused).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE", reason: expect.stringMatching(/busy/) },
    });
    const results = await Promise.all(calls);
    const maxInflight = Math.max(...results.map((result) => (result.ok ? JSON.parse(result.output).maxInflight : 0)));
    expect(maxInflight).toBe(2);
    expect(client.load).toEqual({ running: 0, queued: 0 });
  });
});

describe("7. call deadline", () => {
  it("a hung call rejects with TIMEOUT at its deadline, other calls complete, the slot is released once", async () => {
    const { client, supervisor } = makeClient({ concurrency: 1, callTimeoutMs: 1_000 });
    await client.ping();
    const hung = client.callTool({ name: "file.read", args: { hang: true } });
    const next = client.callTool({ name: "file.read", args: { n: 2 } });
    expect(await hung).toMatchObject({ ok: false, error: { code: "TIMEOUT" } });
    expect((await next).ok).toBe(true);
    expect(client.load).toEqual({ running: 0, queued: 0 });
    expect(supervisor.state).toBe("running");
  });
});

describe("11. grandchild holding stdout", () => {
  it("the parent reacts to the child's exit and the grandchild is killed", async () => {
    const { client, supervisor } = makeClient();
    await client.ping();
    const result = await client.callTool({ name: "shell.exec", args: { grandchild: true } });
    expect(result).toMatchObject({ ok: true });
    const grandchild = result.ok ? Number(result.output) : undefined;
    await waitFor(
      () => supervisor.state !== "running" || supervisor.pid === undefined || !isAlive(grandchild),
      3_000,
      "the exit to be seen",
    );
    await waitFor(() => !isAlive(grandchild), 3_000, "the grandchild to die");
  });
});

describe("an answer written just before the child exits", () => {
  it("is delivered, not turned into TOOLHOST_CRASHED, whichever event Node reports first", async () => {
    for (let round = 0; round < 5; round += 1) {
      const { client, supervisor } = makeClient({ mode: "answer-then-exit" });
      // The tool list first (a call needs its hints), so the call goes out at once.
      await client.listTools();
      const pid = supervisor.pid;
      const answer = client.callTool({ name: "file.write", args: {} });
      // The child answers and exits 100 ms after the call reaches it. Hold the loop until
      // it is a zombie: the exit and the answer then wait side by side when the loop turns.
      await new Promise((resolve) => setTimeout(resolve, 30));
      holdLoopWhile(() => isAlive(pid));
      expect(await answer).toEqual({ ok: true, output: "last words", truncated: false });
      await supervisor.stop();
    }
  });
});

describe("14. graceful stop", () => {
  it("a child that ignores SIGTERM is SIGKILLed after the grace period; no restart follows", async () => {
    const { client, supervisor, spawns } = makeClient({ mode: "ignore-sigterm", stopGraceMs: 200 });
    await client.ping();
    const pid = supervisor.pid;
    const states: string[] = [];
    supervisor.onDidChangeState(({ newState }) => states.push(newState));
    await supervisor.stop();
    expect(isAlive(pid)).toBe(false);
    // It ignored SIGTERM, so only the SIGKILL after the grace period ended it.
    expect(spawns[0]?.signalCode).toBe("SIGKILL");
    // A restart would have gone through back-off while the exit was handled: it did not.
    expect(states).toEqual(["stopping", "stopped"]);
    expect(spawns).toHaveLength(1);
    expect(await client.callTool({ name: "file.read", args: {} })).toMatchObject({
      ok: false,
      error: { code: "TOOLHOST_UNAVAILABLE" },
    });
    await supervisor.stop();
  });

  it("a well-behaved child exits on SIGTERM within its grace period", async () => {
    const { client, supervisor, spawns } = makeClient({ stopGraceMs: 5_000 });
    await client.ping();
    await supervisor.stop();
    // SIGTERM ended it: the stop did not sit out the grace period to SIGKILL it.
    expect(spawns[0]?.signalCode).toBe("SIGTERM");
  });
});

describe("protocol faults", () => {
  it("a JSON-RPC error from the child is INTERNAL for that call; the child stays up", async () => {
    const { client, supervisor, spawns } = makeClient();
    expect(await client.callTool({ name: "file.read", args: { rpcError: true } })).toMatchObject({
      ok: false,
      error: { code: "INTERNAL", reason: expect.stringMatching(/refused by the toolhost: invalid params/) },
    });
    expect((await client.callTool({ name: "file.read", args: {} })).ok).toBe(true);
    expect(supervisor.state).toBe("running");
    expect(spawns).toHaveLength(1);
  });
});

/** A fixture child whose every frame from the parent is kept: what the child was sent, in order. */
function recordedFixture(frames: string[]) {
  return () => {
    const child = spawnFixture("normal");
    const stdin = child.stdin as NonNullable<typeof child.stdin>;
    const write = stdin.write.bind(stdin) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stdin.write = ((chunk: unknown, ...rest: unknown[]) => {
      frames.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof stdin.write;
    return child;
  };
}

/** The tools the child was sent tool.call for, in order. */
function sentTools(frames: string[]): string[] {
  return frames
    .join("")
    .split(/Content-Length: \d+\r\n\r\n/)
    .filter((body) => body.includes('"tool.call"'))
    .map((body) => (JSON.parse(body) as { params: { name: string } }).params.name);
}

/** An audit trail whose commits wait until `commit()`, or are refused with `refuse(error)`. */
function heldAudit() {
  const rows: Record<string, unknown>[] = [];
  let commit!: () => void;
  let refuse!: (error: Error) => void;
  const decided = new Promise<void>((resolve, reject) => {
    commit = resolve;
    refuse = reject;
  });
  decided.catch(() => undefined);
  let begun!: () => void;
  const firstBegun = new Promise<void>((resolve) => (begun = resolve));
  const trail: AuditTrail = {
    begin(intent, outcome) {
      const row: Record<string, unknown> = { ...intent, ...outcome, committed: false };
      rows.push(row);
      begun();
      const committed = decided.then(() => void (row.committed = true));
      return { committed, finish: (result) => void Object.assign(row, result) };
    },
  };
  return { trail, rows, commit, refuse, firstBegun };
}

const turns = async (count: number) => {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe("audit (written ahead: issue 29)", () => {
  it("keeps every call's intent (digest, redacted arguments) and then its outcome, duration and bytes", async () => {
    const { client, audits } = makeClient();
    const result = await client.callTool({
      name: "file.read",
      args: { path: "a", token: "sk-abcdefghijklmnopqrstuv" },
      traceId: "tr-9",
      sessionId: 4,
    });
    expect(audits).toEqual([
      {
        traceId: "tr-9",
        sessionId: 4,
        agentId: "fixture",
        tool: "file.read",
        argsDigest: expect.stringMatching(/^[0-9a-f]{16}$/),
        args: '{"path":"a","token":"sk-[redacted]"}',
        ok: true,
        durationMs: expect.any(Number),
        bytes: result.ok ? Buffer.byteLength(result.output) : -1,
      },
    ]);
  });

  it("a read is sent at once, its row committed while the child serves it; its result waits for that commit", async () => {
    const frames: string[] = [];
    const held = heldAudit();
    const { client } = makeClient({ spawn: recordedFixture(frames), audit: held.trail });
    await client.ping();
    let answered = false;
    const call = client.callTool(echo({ path: "a" })).then((result) => ((answered = true), result));
    await held.firstBegun;
    await waitFor(() => sentTools(frames).length === 1, 5_000, "the read to be sent");
    // The child's answer arrives and turns of the event loop pass: the result still waits for the row.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await turns(3);
    expect(answered).toBe(false);
    expect(held.rows).toMatchObject([{ tool: "file.read", committed: false }]);
    held.commit();
    expect(await call).toMatchObject({ ok: true });
    expect(held.rows).toMatchObject([{ tool: "file.read", committed: true, ok: true }]);
  });

  it.each([
    ["file.write", { path: "notes.txt", content: "x" }],
    ["shell.exec", { command: "touch x" }],
  ])("%s may have effects: it is sent only once its row is committed", async (tool, args) => {
    const frames: string[] = [];
    const held = heldAudit();
    const { client } = makeClient({ spawn: recordedFixture(frames), audit: held.trail });
    await client.ping();
    const call = client.callTool({ name: tool, args });
    await held.firstBegun;
    await new Promise((resolve) => setTimeout(resolve, 100));
    await turns(3);
    expect(sentTools(frames)).toEqual([]);
    held.commit();
    expect(await call).toMatchObject({ ok: true });
    expect(sentTools(frames)).toEqual([tool]);
  });

  it("a refused row: a call with effects is never sent, the caller is told it was not run, and the row keeps why", async () => {
    const frames: string[] = [];
    const held = heldAudit();
    const { client, supervisor } = makeClient({ spawn: recordedFixture(frames), audit: held.trail });
    await client.ping();
    const call = client.callTool({ name: "file.write", args: { path: "notes.txt", content: "x" } });
    await held.firstBegun;
    held.refuse(new Error("SQLITE_FULL: database or disk is full"));
    expect(await call).toEqual({
      ok: false,
      error: {
        code: "INTERNAL",
        tool: "file.write",
        reason: expect.stringMatching(
          /^its audit record could not be stored \(SQLITE_FULL: database or disk is full\), so it was not run: nothing was done/,
        ),
      },
    });
    // The child never saw it: a read after it is sent (its result withheld, its row refused too), the write never.
    expect((await client.callTool(echo({ path: "b" }))).ok).toBe(false);
    expect(sentTools(frames)).toEqual(["file.read"]);
    expect(held.rows[0]).toMatchObject({ tool: "file.write", ok: false, errorCode: "AUDIT_REFUSED" });
    expect(supervisor.state).toBe("running");
  });

  it("a refused row withholds a read's result, saying that nothing was changed", async () => {
    const { client, supervisor, audits } = makeClient({
      audit: {
        begin: (intent) => {
          const row: Record<string, unknown> = { ...intent };
          audits.push(row);
          return {
            committed: Promise.reject(new Error("SQLITE_FULL: database or disk is full")),
            finish: (outcome) => void Object.assign(row, outcome),
          };
        },
      },
    });
    expect(await client.callTool(echo({ path: "a" }))).toEqual({
      ok: false,
      error: {
        code: "INTERNAL",
        tool: "file.read",
        reason: expect.stringMatching(
          /its audit record could not be stored \(SQLITE_FULL: database or disk is full\), so its result is withheld; it only reads, so nothing was changed/,
        ),
      },
    });
    expect(audits).toMatchObject([{ tool: "file.read", ok: false, errorCode: "AUDIT_REFUSED" }]);
    expect(supervisor.state).toBe("running");
  });

  it("a call that never reached the child is one row with its outcome", async () => {
    const { client, audits } = makeClient({ concurrency: 1, queueMax: 0 });
    await client.ping();
    const slow = client.callTool(echo({ sleepMs: 200 }));
    const refused = await client.callTool(echo({ path: "b" }));
    expect(refused).toMatchObject({ ok: false, error: { code: "TOOLHOST_UNAVAILABLE" } });
    await slow;
    expect(audits).toMatchObject([
      { tool: "file.read", ok: false, errorCode: "TOOLHOST_UNAVAILABLE" },
      { tool: "file.read", ok: true },
    ]);
  });

  it("only a tool that reads the agent's own folders goes before its row: not the network, not an MCP server's tools", () => {
    const hints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    const tool = (name: string, annotations = hints) => ({ name, description: "", inputSchema: {}, annotations });
    expect(readsOnly(tool("file.read"))).toBe(true);
    expect(readsOnly(tool("library.search"))).toBe(true);
    expect(readsOnly(tool("web.fetch", { ...hints, openWorldHint: true }))).toBe(false);
    expect(readsOnly(tool("mcp.docs.search"))).toBe(false);
    expect(readsOnly(tool("file.write", { ...hints, readOnlyHint: false }))).toBe(false);
    expect(readsOnly(undefined)).toBe(false);
  });
});
