import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { openDatabase, schemaVersion } from "../../src/store/open-database.js";
import { openStore } from "../../src/store/store.js";
import { tempDir } from "../helpers/temp-dir.js";

const clock = { now: () => 1_700_000_000_000 };

describe("database open and migrations", () => {
  it("migrates an empty database to the latest version with WAL and foreign keys", () => {
    const file = join(tempDir(), "data", "laoding.db");
    const db = openDatabase({ file });
    expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)?.version);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).toEqual(expect.arrayContaining(["sessions", "messages", "capability_gaps", "tool_calls"]));
    db.close();
  });

  it("reopening is a no-op that keeps the data", () => {
    const file = join(tempDir(), "laoding.db");
    const store = openStore(file, clock);
    const session = store.sessions.activeSession("main", "console", "local");
    store.messages.append({ sessionId: session.id, role: "user", content: "hi", traceId: "t1" });
    store.close();
    const again = openStore(file, clock);
    expect(again.messages.bySession(session.id).map((message) => message.content)).toEqual(["hi"]);
    again.close();
  });

  it("refuses a database newer than the code", () => {
    const file = join(tempDir(), "laoding.db");
    const raw = new Database(file);
    raw.pragma("user_version = 999");
    raw.close();
    expect(() => openDatabase({ file })).toThrow(/schema version 999, newer than this code knows \(\d+\)\. Upgrade LaodingBot/);
  });

  it("a failing migration leaves the database at its previous version", () => {
    const file = join(tempDir(), "laoding.db");
    openDatabase({ file }).close();
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    const broken = [
      ...MIGRATIONS,
      { version: latest + 1, name: "broken", sql: "CREATE TABLE half_done (id INTEGER); INSERT INTO no_such_table VALUES (1);" },
    ];
    expect(() => openDatabase({ file, migrations: broken })).toThrow(new RegExp(`migration ${latest + 1} \\(broken\\) failed.*stays at version ${latest}`));
    const db = openDatabase({ file });
    expect(schemaVersion(db)).toBe(latest);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").pluck().get()).toBe(0);
    db.close();
  });
});

describe("repositories", () => {
  it("keeps one active session per chat and a fresh one after closing", () => {
    const store = openStore(join(tempDir(), "laoding.db"), clock);
    const first = store.sessions.activeSession("main", "telegram", "42");
    expect(store.sessions.activeSession("main", "telegram", "42").id).toBe(first.id);
    expect(store.sessions.activeSession("other", "telegram", "42").id).not.toBe(first.id);
    store.sessions.closeActive("main", "telegram", "42");
    const second = store.sessions.activeSession("main", "telegram", "42");
    expect(second.id).not.toBe(first.id);
    expect(store.sessions.get(first.id)?.status).toBe("closed");
    store.close();
  });

  it("drops a message whose dedupe key was seen before", () => {
    const store = openStore(join(tempDir(), "laoding.db"), clock);
    const session = store.sessions.activeSession("main", "telegram", "42");
    const first = store.messages.append({ sessionId: session.id, role: "user", content: "a", traceId: "t1", dedupeKey: "telegram:42:7" });
    const again = store.messages.append({ sessionId: session.id, role: "user", content: "a", traceId: "t2", dedupeKey: "telegram:42:7" });
    expect(first).toBeTypeOf("number");
    expect(again).toBeUndefined();
    expect(store.messages.seen("telegram:42:7")).toBe(true);
    store.close();
  });

  it("records gaps and tool calls by trace id, capping the user's text", () => {
    const store = openStore(join(tempDir(), "laoding.db"), clock);
    const id = store.gaps.record({ agentId: "main", traceId: "t9", intentKey: "deploy-docker", reason: "no_skill", gapClass: "capability", userText: "x".repeat(2_000) });
    expect(store.gaps.get(id)?.userText).toHaveLength(500);
    void store.toolCalls.record({ traceId: "t9", agentId: "main", tool: "file.read", argsDigest: "abc", ok: false, errorCode: "PATH_NOT_FOUND", durationMs: 3.4 });
    expect(store.toolCalls.byTrace("t9")).toMatchObject([{ tool: "file.read", ok: 0, errorCode: "PATH_NOT_FOUND", durationMs: 3 }]);
    expect(store.gaps.byTrace("t9")).toHaveLength(1);
    store.close();
  });
});
