import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { migrate } from "../../src/store/sql/migrate.js";
import { openPostgresDriver } from "../../src/store/sql/postgres-driver.js";
import { openSqliteDriver } from "../../src/store/sql/sqlite-driver.js";
import type { Engine } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createToolCallsStore, describeToolCall, OUTCOME_UNKNOWN } from "../../src/store/tool-calls-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const clock = { now: () => 1_700_000_000_000 };
const call = (tool: string, ok = true) => ({
  traceId: "t1",
  agentId: "main",
  tool,
  argsDigest: "d",
  ok,
  durationMs: 1.4,
});
const storeModule = fileURLToPath(new URL("../../src/store/store.ts", import.meta.url));

/** Where a store of `engine` lives, kept after its close: a SQLite file, or a PostgreSQL database. */
async function target(engine: Engine): Promise<string> {
  return engine === "sqlite" ? join(tempDir(), "laoding.db") : testDatabaseUrl();
}

/** The rows in tool_calls as another connection sees them (not the store's own). */
async function countRows(engine: Engine, where: string): Promise<number> {
  if (engine === "sqlite") {
    const reader = new Database(where, { readonly: true });
    try {
      return (reader.prepare("SELECT count(*) AS n FROM tool_calls").get() as { n: number }).n;
    } finally {
      reader.close();
    }
  }
  const reader = await openPostgresDriver({ url: where, maxConnections: 1 });
  try {
    return (await reader.get<{ n: number }>("SELECT count(*) AS n FROM tool_calls"))?.n ?? -1;
  } finally {
    await reader.close();
  }
}

const countIn = async (store: Store): Promise<number> =>
  (await store.sql.get<{ n: number }>("SELECT count(*) AS n FROM tool_calls"))?.n ?? -1;
const toolsIn = async (store: Store): Promise<string[]> =>
  (await store.sql.all<{ tool: string }>("SELECT tool FROM tool_calls ORDER BY id")).map((row) => row.tool);

/** A trigger that refuses inserts into tool_calls with `message` (only rows of tool `onlyTool` when given). */
async function refuseInserts(
  store: Store,
  name: string,
  message: string,
  onlyTool?: string,
): Promise<() => Promise<void>> {
  if (store.engine === "sqlite") {
    await store.sql.exec(
      `CREATE TRIGGER ${name} BEFORE INSERT ON tool_calls ${onlyTool ? `WHEN NEW.tool = '${onlyTool}' ` : ""}BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    );
    return () => store.sql.exec(`DROP TRIGGER ${name}`);
  }
  const raise = `RAISE EXCEPTION '${message}';`;
  await store.sql.exec(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${onlyTool ? `IF NEW.tool = '${onlyTool}' THEN ${raise} END IF;` : raise} RETURN NEW; END $$;
     CREATE TRIGGER ${name} BEFORE INSERT ON tool_calls FOR EACH ROW EXECUTE FUNCTION ${name}()`,
  );
  return () => store.sql.exec(`DROP TRIGGER ${name} ON tool_calls`);
}

describe.each(STORE_ENGINES)("tool-call audit trail on %s", (engine) => {
  it("writes the rows recorded together in one transaction, and tells each caller once it is committed", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const committed: string[] = [];
      const records = ["file.read", "file.write", "file.list"].map((tool, index) =>
        store.record(call(tool, index !== 1)).then(() => void committed.push(tool)),
      );
      expect(flushes).toHaveLength(1);
      expect(store.pending).toBe(3);
      expect(await countIn(s)).toBe(0);
      await Promise.resolve();
      expect(committed).toEqual([]);
      flushes[0]?.();
      await Promise.all(records);
      expect(committed).toEqual(["file.read", "file.write", "file.list"]);
      expect(store.pending).toBe(0);
      expect(await store.byTrace("t1")).toMatchObject([
        { tool: "file.read", ok: 1, durationMs: 1, createdAt: clock.now() },
        { tool: "file.write", ok: 0 },
        { tool: "file.list", ok: 1 },
      ]);
    } finally {
      await s.close();
    }
  });

  it("a queue longer than one INSERT's rows is written whole and in order, every field in its column", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      for (let index = 0; index < 150; index += 1) {
        void store.record({
          traceId: "t1",
          agentId: "main",
          sessionId: index,
          tool: `tool-${index}`,
          argsDigest: `d${index}`,
          ok: index % 3 !== 0,
          ...(index % 3 === 0 ? { errorCode: "TIMEOUT" } : {}),
          durationMs: index + 0.4,
        });
      }
      flushes[0]?.();
      const rows = await store.byTrace("t1");
      expect(rows).toHaveLength(150);
      expect(rows.map((row) => row.tool)).toEqual(Array.from({ length: 150 }, (_, index) => `tool-${index}`));
      expect(rows[129]).toMatchObject({
        traceId: "t1",
        agentId: "main",
        sessionId: 129,
        argsDigest: "d129",
        ok: 0,
        errorCode: "TIMEOUT",
        durationMs: 129,
        createdAt: clock.now(),
      });
      expect(rows[130]).toMatchObject({ sessionId: 130, ok: 1, errorCode: null });
    } finally {
      await s.close();
    }
  });

  it("with the default schedule, a row is in the database, for every other reader, when its record resolves", async () => {
    const where = await target(engine);
    const store = await openStore(where, clock);
    try {
      const both = [store.toolCalls.record(call("file.read")), store.toolCalls.record(call("file.write"))];
      expect(store.toolCalls.pending).toBe(2);
      // The SQLite reader counts synchronously, before the turn ends; a PostgreSQL reader's round trip would let the flush run first.
      if (engine === "sqlite") expect(await countRows(engine, where)).toBe(0);
      await Promise.all(both);
      expect(await countRows(engine, where)).toBe(2);
    } finally {
      await store.close();
    }
  });

  it("a process killed the moment it has a recorded result keeps that row", async () => {
    const where = await target(engine);
    const script = `import { openStore } from ${JSON.stringify(storeModule)};
      const store = await openStore(${JSON.stringify(where)}, { now: () => 1 });
      await store.toolCalls.record({ traceId: "t1", agentId: "main", tool: "file.write", argsDigest: "d", ok: true, durationMs: 1 });
      process.kill(process.pid, "SIGKILL");`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(run.signal, run.stderr).toBe("SIGKILL");
    expect(await countRows(engine, where)).toBe(1);
  });

  // PostgreSQL cannot be written synchronously from the exit hook: there the rows are left (flushSync's header).
  it.runIf(engine === "sqlite")("a process that exits with the store open still writes its queued rows", async () => {
    const where = await target(engine);
    const script = `import { openStore } from ${JSON.stringify(storeModule)};
      const store = await openStore(${JSON.stringify(where)}, { now: () => 1 });
      void store.toolCalls.record({ traceId: "t1", agentId: "main", tool: "file.read", argsDigest: "d", ok: true, durationMs: 1 });
      process.exit(3);`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(3);
    expect(await countRows(engine, where)).toBe(1);
  });

  it("flushSync writes the queue before it returns on SQLite, and leaves it for a later flush on PostgreSQL", async () => {
    const where = await target(engine);
    const s = await openStore(where, clock);
    try {
      const store = createToolCallsStore(s.sql, clock, () => undefined);
      const record = store.record(call("file.read"));
      store.flushSync();
      if (engine === "sqlite") {
        expect(store.pending).toBe(0);
        expect(await countRows(engine, where)).toBe(1);
      } else {
        expect(store.pending).toBe(1);
        await store.flush();
        expect(await countRows(engine, where)).toBe(1);
      }
      await record;
    } finally {
      await s.close();
    }
  });

  it("a read of the trail and the store's close write what is still queued", async () => {
    const where = await target(engine);
    const store = await openStore(where, clock);
    void store.toolCalls.record(call("file.read"));
    expect(await store.toolCalls.byTrace("t1")).toHaveLength(1);
    void store.toolCalls.record(call("file.write"));
    await store.close();
    expect(await countRows(engine, where)).toBe(2);
  });

  it("a call recorded after the store closed is refused, not left waiting", async () => {
    const store = await openTestStore(engine, { clock });
    await store.close();
    await expect(store.toolCalls.record(call("file.read"))).rejects.toThrow("the audit database is closed");
  });

  it("a failed write tells its callers, keeps the rows for the next try and reports the failure", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const failures: Array<{ message: string }> = [];
      store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
      const allow = await refuseInserts(s, "refuse", "disk says no");
      const refused = [store.record(call("file.read")), store.record(call("file.write"))];
      expect(flushes).toHaveLength(1);
      flushes[0]?.();
      for (const record of refused) await expect(record).rejects.toThrow("disk says no");
      expect(failures).toEqual([
        { message: expect.stringContaining("disk says no") as string, refused: 2, kept: 2, dropped: 0 },
      ]);
      expect(store.pending).toBe(2);
      expect(await countIn(s)).toBe(0);
      await allow();
      const later = store.record(call("file.list"));
      flushes[1]?.();
      await later;
      expect(store.pending).toBe(0);
      expect(await toolsIn(s)).toEqual(["file.read", "file.write", "file.list"]);
    } finally {
      await s.close();
    }
  });

  it("a kept row that cannot be written fails no new caller, and is given up after three tries", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const failures: unknown[] = [];
      store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
      await refuseInserts(s, "refuse_bad", "bad row", "bad");
      const bad = store.record(call("bad"));
      flushes.shift()?.();
      await expect(bad).rejects.toThrow("bad row");
      for (const tool of ["good-1", "good-2"]) {
        const good = store.record(call(tool));
        flushes.shift()?.();
        await good;
      }
      const badRow = expect.stringContaining("bad row") as string;
      expect(failures).toEqual([
        { message: badRow, refused: 1, kept: 1, dropped: 0 },
        { message: badRow, refused: 1, kept: 1, dropped: 0 },
        { message: badRow, refused: 1, kept: 0, dropped: 1 },
      ]);
      expect(store.pending).toBe(0);
      expect(await toolsIn(s)).toEqual(["good-1", "good-2"]);
    } finally {
      await s.close();
    }
  });

  it("a read of the trail whose flush is refused reports it and throws", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const store = createToolCallsStore(s.sql, clock, () => undefined);
      const failures: unknown[] = [];
      store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
      await refuseInserts(s, "refuse", "disk says no");
      const refused = store.record(call("file.read"));
      await expect(store.byTrace("t1")).rejects.toThrow("disk says no");
      expect(failures).toEqual([
        { message: expect.stringContaining("disk says no") as string, refused: 1, kept: 1, dropped: 0 },
      ]);
      await expect(refused).rejects.toThrow("disk says no");
    } finally {
      await s.close();
    }
  });

  it("a flush inside another transaction waits for it to end before telling anyone", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      let committed = false;
      const record = store.record(call("file.read")).then(() => (committed = true));
      await expect(
        s.transaction(async () => {
          await store.flush();
          throw new Error("the outer work fails");
        }),
      ).rejects.toThrow("the outer work fails");
      await Promise.resolve();
      expect(committed).toBe(false);
      expect(await countIn(s)).toBe(0);
      while (flushes.length > 0) flushes.shift()?.();
      await record;
      expect(await countIn(s)).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("a row recorded inside a transaction is written by a flush of its own, kept when that transaction rolls back", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      let record: Promise<void> | undefined;
      await expect(
        s.transaction(async () => {
          record = s.toolCalls.record(call("file.read"));
          // The turn ends: the scheduled flush starts (on SQLite it waits for this transaction).
          await new Promise((resolve) => setImmediate(resolve));
          await new Promise((resolve) => setImmediate(resolve));
          throw new Error("the outer work fails");
        }),
      ).rejects.toThrow("the outer work fails");
      await record;
      expect(await toolsIn(s)).toEqual(["file.read"]);
    } finally {
      await s.close();
    }
  });

  it("runs one flush at a time: a flush asked for while one writes starts after it and is shared", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const store = createToolCallsStore(s.sql, clock, () => undefined);
      const first = store.record(call("file.read"));
      const running = store.flush();
      const second = store.record(call("file.write"));
      const after = store.flush();
      expect(store.flush()).toBe(after);
      expect(after).not.toBe(running);
      await Promise.all([running, after, first, second]);
      expect(store.pending).toBe(0);
      expect(await toolsIn(s)).toEqual(["file.read", "file.write"]);
    } finally {
      await s.close();
    }
  });
});

/** An intent as the toolhost client makes it. */
const intent = (tool: string, traceId = "t1") => ({
  traceId,
  agentId: "main",
  tool,
  argsDigest: "d",
  args: `{"path":"${tool}.txt"}`,
});

type Raw = {
  tool: string;
  ok: number | null;
  errorCode: string | null;
  durationMs: number | null;
  bytes: number | null;
};
const rawRows = async (store: Store): Promise<Raw[]> =>
  store.sql.all<Raw>(
    "SELECT tool, ok, error_code AS errorCode, duration_ms AS durationMs, bytes FROM tool_calls ORDER BY id",
  );

/** A trigger that refuses updates of tool_calls (outcomes) with `message`. */
async function refuseUpdates(store: Store, name: string, message: string): Promise<() => Promise<void>> {
  if (store.engine === "sqlite") {
    await store.sql.exec(
      `CREATE TRIGGER ${name} BEFORE UPDATE ON tool_calls BEGIN SELECT RAISE(ABORT, '${message}'); END`,
    );
    return () => store.sql.exec(`DROP TRIGGER ${name}`);
  }
  await store.sql.exec(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${message}'; END $$;
     CREATE TRIGGER ${name} BEFORE UPDATE ON tool_calls FOR EACH ROW EXECUTE FUNCTION ${name}()`,
  );
  return () => store.sql.exec(`DROP TRIGGER ${name} ON tool_calls`);
}

describe.each(STORE_ENGINES)("write-ahead audit on %s (issue 29)", (engine) => {
  it("an intent row is committed without an outcome; the outcome is written by a later group commit", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const entry = store.begin(intent("file.write"));
      expect(flushes).toHaveLength(1);
      flushes.shift()?.();
      await entry.committed;
      expect(await rawRows(s)).toEqual([
        { tool: "file.write", ok: null, errorCode: null, durationMs: null, bytes: null },
      ]);
      entry.finish({ ok: true, durationMs: 12.6, bytes: 40 });
      // Queued, not written: the next commit carries it.
      expect(store.pending).toBe(1);
      expect(await rawRows(s)).toMatchObject([{ ok: null }]);
      expect(flushes).toHaveLength(1);
      flushes.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await rawRows(s)).toEqual([{ tool: "file.write", ok: 1, errorCode: null, durationMs: 13, bytes: 40 }]);
      expect(await store.byTrace("t1")).toMatchObject([
        { tool: "file.write", args: '{"path":"file.write.txt"}', ok: 1, outcome: "ok", createdAt: clock.now() },
      ]);
    } finally {
      await s.close();
    }
  });

  it("one commit carries the last call's outcome and the next call's intent", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const first = store.begin(intent("file.read"));
      flushes.shift()?.();
      await first.committed;
      first.finish({ ok: false, errorCode: "PATH_NOT_FOUND", durationMs: 1 });
      const second = store.begin(intent("file.list"));
      // One flush scheduled for both.
      expect(flushes).toHaveLength(1);
      expect(store.pending).toBe(2);
      flushes.shift()?.();
      await second.committed;
      expect(store.pending).toBe(0);
      expect(await rawRows(s)).toEqual([
        { tool: "file.read", ok: 0, errorCode: "PATH_NOT_FOUND", durationMs: 1, bytes: null },
        { tool: "file.list", ok: null, errorCode: null, durationMs: null, bytes: null },
      ]);
    } finally {
      await s.close();
    }
  });

  it("an outcome known before its intent is written goes into the same row (no UPDATE)", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const entry = store.begin(intent("file.read"));
      entry.finish({ ok: true, durationMs: 2, bytes: 4096 });
      entry.finish({ ok: false, errorCode: "TIMEOUT", durationMs: 9 });
      flushes.shift()?.();
      await entry.committed;
      expect(store.pending).toBe(0);
      expect(await rawRows(s)).toEqual([{ tool: "file.read", ok: 1, errorCode: null, durationMs: 2, bytes: 4096 }]);
    } finally {
      await s.close();
    }
  });

  it("a refused intent row is kept with the outcome its caller was given, and written with it later", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const failures: unknown[] = [];
      store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
      const allow = await refuseInserts(s, "refuse_intents", "database or disk is full");
      const entry = store.begin(intent("file.write"));
      flushes.shift()?.();
      await expect(entry.committed).rejects.toThrow("database or disk is full");
      entry.finish({ ok: false, errorCode: "AUDIT_REFUSED", durationMs: 1 });
      expect(failures).toEqual([
        { message: expect.stringContaining("database or disk is full") as string, refused: 1, kept: 1, dropped: 0 },
      ]);
      await allow();
      const later = store.begin(intent("file.read"));
      flushes.shift()?.();
      await later.committed;
      expect(await rawRows(s)).toEqual([
        { tool: "file.write", ok: 0, errorCode: "AUDIT_REFUSED", durationMs: 1, bytes: null },
        { tool: "file.read", ok: null, errorCode: null, durationMs: null, bytes: null },
      ]);
    } finally {
      await s.close();
    }
  });

  it("a refused outcome withholds no new caller: the intents go alone, the outcome is kept and written later", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const flushes: Array<() => void> = [];
      const store = createToolCallsStore(s.sql, clock, (flush) => void flushes.push(flush));
      const failures: unknown[] = [];
      store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
      const first = store.begin(intent("file.read"));
      flushes.shift()?.();
      await first.committed;
      const allow = await refuseUpdates(s, "refuse_outcomes", "no outcomes today");
      first.finish({ ok: true, durationMs: 3 });
      const second = store.begin(intent("file.list"));
      flushes.shift()?.();
      await second.committed;
      expect(failures).toEqual([
        {
          message: expect.stringContaining("no outcomes today") as string,
          refused: 1,
          kept: 1,
          dropped: 0,
          of: "outcomes",
        },
      ]);
      expect(await rawRows(s)).toMatchObject([
        { tool: "file.read", ok: null },
        { tool: "file.list", ok: null },
      ]);
      await allow();
      await store.flush();
      expect(store.pending).toBe(0);
      expect(await rawRows(s)).toMatchObject([
        { tool: "file.read", ok: 1, durationMs: 3 },
        { tool: "file.list", ok: null },
      ]);
    } finally {
      await s.close();
    }
  });

  it("the exit flush and the store's close write outcomes too", async () => {
    const where = await target(engine);
    const s = await openStore(where, clock);
    const entry = s.toolCalls.begin(intent("file.write"));
    await entry.committed;
    entry.finish({ ok: true, durationMs: 5 });
    if (engine === "sqlite") {
      s.toolCalls.flushSync();
      expect(s.toolCalls.pending).toBe(0);
    }
    await s.close();
    const reader = await openStore(where, clock);
    try {
      expect(await rawRows(reader)).toMatchObject([{ tool: "file.write", ok: 1, durationMs: 5 }]);
    } finally {
      await reader.close();
    }
  });

  it("rows without an outcome: pending while their process runs, unknown once it is gone; the sweep marks only those", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      const alive = new Set([101]);
      const options = (pid: number) => ({
        writer: `${hostname()}:${pid}`,
        processAlive: (id: number) => alive.has(id),
      });
      const running = createToolCallsStore(s.sql, clock, undefined, options(101));
      const crashed = createToolCallsStore(s.sql, clock, undefined, options(102));
      const elsewhere = createToolCallsStore(s.sql, clock, undefined, { writer: "another-host:103" });
      await running.begin(intent("file.read")).committed;
      await crashed.begin(intent("shell.exec")).committed;
      await elsewhere.begin(intent("file.write")).committed;
      const finished = crashed.begin(intent("file.list"));
      finished.finish({ ok: true, durationMs: 1 });
      await finished.committed;
      const reader = createToolCallsStore(s.sql, clock, undefined, options(104));
      expect((await reader.byTrace("t1")).map((row) => [row.tool, row.outcome])).toEqual([
        ["file.read", "pending"],
        ["shell.exec", "unknown"],
        ["file.write", "pending"],
        ["file.list", "ok"],
      ]);
      expect(await reader.sweepStopped()).toBe(1);
      expect(await reader.sweepStopped()).toBe(0);
      const rows = await s.sql.all<{ tool: string; ok: number | null; errorCode: string | null }>(
        "SELECT tool, ok, error_code AS errorCode FROM tool_calls ORDER BY id",
      );
      expect(rows).toEqual([
        { tool: "file.read", ok: null, errorCode: null },
        { tool: "shell.exec", ok: null, errorCode: OUTCOME_UNKNOWN },
        { tool: "file.write", ok: null, errorCode: null },
        { tool: "file.list", ok: 1, errorCode: null },
      ]);
      expect((await reader.byTrace("t1"))[1]).toMatchObject({ outcome: "unknown", errorCode: OUTCOME_UNKNOWN });
      expect(describeToolCall({ outcome: "unknown", errorCode: OUTCOME_UNKNOWN, durationMs: null, bytes: null })).toBe(
        "outcome unknown (the bot stopped)",
      );
    } finally {
      await s.close();
    }
  });

  it("a process's own rows from before it opened the store are an earlier process's (same pid): unknown and swept", async () => {
    const s = await openTestStore(engine, { clock });
    try {
      let now = 1_000;
      const moving = { now: () => now };
      const writer = `${hostname()}:${process.pid}`;
      const earlier = createToolCallsStore(s.sql, moving, undefined, { writer });
      await earlier.begin(intent("shell.exec")).committed;
      now = 2_000;
      const current = createToolCallsStore(s.sql, moving, undefined, { writer });
      await current.begin(intent("file.read")).committed;
      expect((await current.byTrace("t1")).map((row) => row.outcome)).toEqual(["unknown", "pending"]);
      expect(await current.sweepStopped()).toBe(1);
      expect((await current.byTrace("t1")).map((row) => row.outcome)).toEqual(["unknown", "pending"]);
    } finally {
      await s.close();
    }
  });

  it("the migration keeps the rows from before it, outcome and all", async () => {
    const where = await target(engine);
    const driver =
      engine === "sqlite"
        ? openSqliteDriver({ file: where })
        : await openPostgresDriver({ url: where, maxConnections: 1 });
    try {
      await migrate(
        driver,
        MIGRATIONS.filter((migration) => migration.version <= 12),
      );
      await driver.run(
        "INSERT INTO tool_calls (trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at) VALUES ('t1', 'main', 3, 'file.read', 'd', 0, 'TIMEOUT', 7, 5)",
      );
      await migrate(driver);
      const store = createToolCallsStore(driver, clock);
      expect(await store.byTrace("t1")).toEqual([
        {
          id: 1,
          traceId: "t1",
          agentId: "main",
          sessionId: 3,
          tool: "file.read",
          argsDigest: "d",
          args: null,
          writer: null,
          ok: 0,
          errorCode: "TIMEOUT",
          durationMs: 7,
          bytes: null,
          createdAt: 5,
          outcome: "failed",
        },
      ]);
      // And new rows get ids after the old ones.
      await store.begin(intent("file.list")).committed;
      expect((await store.byTrace("t1")).map((row) => row.id)).toEqual([1, 2]);
    } finally {
      await driver.close();
    }
  });
});
