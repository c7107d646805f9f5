import { join } from "node:path";
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
  it("writes the rows of one loop turn together, after the turn", async () => {
    const file = join(tempDir(), "laoding.db");
    const store = openStore(file, clock);
    store.toolCalls.record(call("file.read"));
    store.toolCalls.record(call("file.write", false));
    store.toolCalls.record(call("file.list"));
    expect(store.toolCalls.pending).toBe(3);
    expect(countRows(file)).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.toolCalls.pending).toBe(0);
    expect(countRows(file)).toBe(3);
    expect(store.toolCalls.byTrace("t1")).toMatchObject([
      { tool: "file.read", ok: 1, durationMs: 1, createdAt: clock.now() },
      { tool: "file.write", ok: 0 },
      { tool: "file.list", ok: 1 },
    ]);
    store.close();
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
