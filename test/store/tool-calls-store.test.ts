import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/open-database.js";
import { openStore } from "../../src/store/store.js";
import { createToolCallsStore } from "../../src/store/tool-calls-store.js";
import { tempDir } from "../helpers/temp-dir.js";

const clock = { now: () => 1_700_000_000_000 };
const call = (tool: string, ok = true) => ({ traceId: "t1", agentId: "main", tool, argsDigest: "d", ok, durationMs: 1.4 });
const countRows = (file: string): number => {
  const reader = new Database(file, { readonly: true });
  try {
    return (reader.prepare("SELECT count(*) AS n FROM tool_calls").get() as { n: number }).n;
  } finally {
    reader.close();
  }
};

describe("tool-call audit trail", () => {
  it("writes the rows recorded together in one transaction, and tells each caller once it is committed", async () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    const committed: string[] = [];
    const records = ["file.read", "file.write", "file.list"].map((tool, index) => store.record(call(tool, index !== 1)).then(() => void committed.push(tool)));
    expect(flushes).toHaveLength(1);
    expect(store.pending).toBe(3);
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(0);
    await Promise.resolve();
    expect(committed).toEqual([]);
    flushes[0]?.();
    await Promise.all(records);
    expect(committed).toEqual(["file.read", "file.write", "file.list"]);
    expect(store.pending).toBe(0);
    expect(store.byTrace("t1")).toMatchObject([
      { tool: "file.read", ok: 1, durationMs: 1, createdAt: clock.now() },
      { tool: "file.write", ok: 0 },
      { tool: "file.list", ok: 1 },
    ]);
    db.close();
  });

  it("a queue longer than one INSERT's rows is written whole and in order, every field in its column", () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    for (let index = 0; index < 150; index += 1) {
      void store.record({ traceId: "t1", agentId: "main", sessionId: index, tool: `tool-${index}`, argsDigest: `d${index}`, ok: index % 3 !== 0, ...(index % 3 === 0 ? { errorCode: "TIMEOUT" } : {}), durationMs: index + 0.4 });
    }
    flushes[0]?.();
    const rows = store.byTrace("t1");
    expect(rows).toHaveLength(150);
    expect(rows.map((row) => row.tool)).toEqual(Array.from({ length: 150 }, (_, index) => `tool-${index}`));
    expect(rows[129]).toMatchObject({ traceId: "t1", agentId: "main", sessionId: 129, argsDigest: "d129", ok: 0, errorCode: "TIMEOUT", durationMs: 129, createdAt: clock.now() });
    expect(rows[130]).toMatchObject({ sessionId: 130, ok: 1, errorCode: null });
    db.close();
  });

  it("with the default schedule, a row is in the file, for every other reader, when its record resolves", async () => {
    const file = join(tempDir(), "laoding.db");
    const store = openStore(file, clock);
    const both = [store.toolCalls.record(call("file.read")), store.toolCalls.record(call("file.write"))];
    expect(countRows(file)).toBe(0);
    await Promise.all(both);
    expect(countRows(file)).toBe(2);
    store.close();
  });

  it("a process killed the moment it has a recorded result keeps that row", () => {
    const file = join(tempDir(), "laoding.db");
    const storeModule = fileURLToPath(new URL("../../src/store/store.ts", import.meta.url));
    const script = `import { openStore } from ${JSON.stringify(storeModule)};
      const store = openStore(${JSON.stringify(file)}, { now: () => 1 });
      await store.toolCalls.record({ traceId: "t1", agentId: "main", tool: "file.write", argsDigest: "d", ok: true, durationMs: 1 });
      process.kill(process.pid, "SIGKILL");`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.signal, run.stderr).toBe("SIGKILL");
    expect(countRows(file)).toBe(1);
  });

  it("a process that exits with the store open still writes its queued rows", () => {
    const file = join(tempDir(), "laoding.db");
    const storeModule = fileURLToPath(new URL("../../src/store/store.ts", import.meta.url));
    const script = `import { openStore } from ${JSON.stringify(storeModule)};
      const store = openStore(${JSON.stringify(file)}, { now: () => 1 });
      store.toolCalls.record({ traceId: "t1", agentId: "main", tool: "file.read", argsDigest: "d", ok: true, durationMs: 1 });
      process.exit(3);`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
    expect(run.status, run.stderr).toBe(3);
    expect(countRows(file)).toBe(1);
  });

  it("a read of the trail and the store's close write what is still queued", () => {
    const file = join(tempDir(), "laoding.db");
    const store = openStore(file, clock);
    void store.toolCalls.record(call("file.read"));
    expect(store.toolCalls.byTrace("t1")).toHaveLength(1);
    void store.toolCalls.record(call("file.write"));
    store.close();
    expect(countRows(file)).toBe(2);
  });

  it("a call recorded after the store closed is refused, not left waiting", async () => {
    const store = openStore(join(tempDir(), "laoding.db"), clock);
    store.close();
    await expect(store.toolCalls.record(call("file.read"))).rejects.toThrow("the audit database is closed");
  });

  it("a failed write tells its callers, keeps the rows for the next try and reports the failure", async () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    const failures: Array<{ message: string }> = [];
    store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON tool_calls BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const refused = [store.record(call("file.read")), store.record(call("file.write"))];
    expect(flushes).toHaveLength(1);
    flushes[0]?.();
    expect(failures).toEqual([{ message: "disk says no", refused: 2, kept: 2, dropped: 0 }]);
    for (const record of refused) await expect(record).rejects.toThrow("disk says no");
    expect(store.pending).toBe(2);
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(0);
    db.exec("DROP TRIGGER refuse");
    const later = store.record(call("file.list"));
    flushes[1]?.();
    await later;
    expect(store.pending).toBe(0);
    expect(db.prepare("SELECT tool FROM tool_calls ORDER BY id").pluck().all()).toEqual(["file.read", "file.write", "file.list"]);
    db.close();
  });

  it("a kept row that cannot be written fails no new caller, and is given up after three tries", async () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    const failures: unknown[] = [];
    store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
    db.exec("CREATE TRIGGER refuse_bad BEFORE INSERT ON tool_calls WHEN NEW.tool = 'bad' BEGIN SELECT RAISE(ABORT, 'bad row'); END");
    const bad = store.record(call("bad"));
    flushes.shift()?.();
    await expect(bad).rejects.toThrow("bad row");
    for (const tool of ["good-1", "good-2"]) {
      const good = store.record(call(tool));
      flushes.shift()?.();
      await good;
    }
    expect(failures).toEqual([
      { message: "bad row", refused: 1, kept: 1, dropped: 0 },
      { message: "bad row", refused: 1, kept: 1, dropped: 0 },
      { message: "bad row", refused: 1, kept: 0, dropped: 1 },
    ]);
    expect(store.pending).toBe(0);
    expect(db.prepare("SELECT tool FROM tool_calls ORDER BY id").pluck().all()).toEqual(["good-1", "good-2"]);
    db.close();
  });

  it("a read of the trail whose flush is refused reports it and throws", () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const store = createToolCallsStore(db, clock, () => undefined);
    const failures: unknown[] = [];
    store.onFlushError((error, failure) => failures.push({ message: (error as Error).message, ...failure }));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON tool_calls BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    const refused = store.record(call("file.read"));
    expect(() => store.byTrace("t1")).toThrow("disk says no");
    expect(failures).toEqual([{ message: "disk says no", refused: 1, kept: 1, dropped: 0 }]);
    db.close();
    return expect(refused).rejects.toThrow("disk says no");
  });

  it("a flush inside another transaction waits for it to end before telling anyone", async () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    let committed = false;
    const record = store.record(call("file.read")).then(() => (committed = true));
    expect(() => db.transaction(() => {
      store.flush();
      throw new Error("the outer work fails");
    })()).toThrow("the outer work fails");
    await Promise.resolve();
    expect(committed).toBe(false);
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(0);
    while (flushes.length > 0) flushes.shift()?.();
    await record;
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(1);
    db.close();
  });
});
