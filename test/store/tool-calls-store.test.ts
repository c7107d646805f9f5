import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
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
  it("writes the rows queued together in one transaction, a little later", () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    store.record(call("file.read"));
    store.record(call("file.write", false));
    store.record(call("file.list"));
    expect(flushes).toHaveLength(1);
    expect(store.pending).toBe(3);
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(0);
    flushes[0]?.();
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
      store.record({ traceId: "t1", agentId: "main", sessionId: index, tool: `tool-${index}`, argsDigest: `d${index}`, ok: index % 3 !== 0, ...(index % 3 === 0 ? { errorCode: "TIMEOUT" } : {}), durationMs: index + 0.4 });
    }
    flushes[0]?.();
    const rows = store.byTrace("t1");
    expect(rows).toHaveLength(150);
    expect(rows.map((row) => row.tool)).toEqual(Array.from({ length: 150 }, (_, index) => `tool-${index}`));
    expect(rows[129]).toMatchObject({ traceId: "t1", agentId: "main", sessionId: 129, argsDigest: "d129", ok: 0, errorCode: "TIMEOUT", durationMs: 129, createdAt: clock.now() });
    expect(rows[130]).toMatchObject({ sessionId: 130, ok: 1, errorCode: null });
    db.close();
  });

  it("with the default schedule, rows reach the file without anyone asking", async () => {
    const file = join(tempDir(), "laoding.db");
    const store = openStore(file, clock);
    store.toolCalls.record(call("file.read"));
    store.toolCalls.record(call("file.write"));
    await vi.waitFor(() => expect(countRows(file)).toBe(2));
    store.close();
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
    store.toolCalls.record(call("file.read"));
    expect(store.toolCalls.byTrace("t1")).toHaveLength(1);
    store.toolCalls.record(call("file.write"));
    store.close();
    expect(countRows(file)).toBe(2);
  });

  it("a failed write keeps the rows for the next try and reports the failure", () => {
    const db = openDatabase({ file: join(tempDir(), "laoding.db") });
    const flushes: Array<() => void> = [];
    const store = createToolCallsStore(db, clock, (flush) => void flushes.push(flush));
    const failures: Array<{ message: string; rows: number }> = [];
    store.onFlushError((error, rows) => failures.push({ message: (error as Error).message, rows }));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON tool_calls BEGIN SELECT RAISE(ABORT, 'disk says no'); END");
    store.record(call("file.read"));
    store.record(call("file.write"));
    expect(flushes).toHaveLength(1);
    flushes[0]?.();
    expect(failures).toEqual([{ message: "disk says no", rows: 2 }]);
    expect(store.pending).toBe(2);
    expect(db.prepare("SELECT count(*) FROM tool_calls").pluck().get()).toBe(0);
    db.exec("DROP TRIGGER refuse");
    store.record(call("file.list"));
    flushes[1]?.();
    expect(store.pending).toBe(0);
    expect(db.prepare("SELECT tool FROM tool_calls ORDER BY id").pluck().all()).toEqual(["file.read", "file.write", "file.list"]);
    db.close();
  });
});
