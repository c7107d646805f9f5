import { createServer } from "node:net";
import { join } from "node:path";
import { inspect } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Migration } from "../../src/store/migrations.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { isPostgresUrl } from "../../src/store/sql/database-url.js";
import { latestVersion, migrate, schemaVersion } from "../../src/store/sql/migrate.js";
import { openPostgresDriver } from "../../src/store/sql/postgres-driver.js";
import { StoreError, type Engine, type SqlDriver } from "../../src/store/sql/sql-driver.js";
import { openSqliteDriver, type SqliteDriver } from "../../src/store/sql/sqlite-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { PASSWORD_ROLE_GROUP } from "../helpers/postgres-global-setup.js";
import { tempDir } from "../helpers/temp-dir.js";
import { STORE_ENGINES, openTestStore, testDatabaseUrl } from "../helpers/test-store.js";

const clock = { now: () => 1_700_000_000_000 };

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close().catch(() => undefined);
});

/** Where a fresh, empty database lives: a SQLite file path (its folder not yet made) or a new PostgreSQL database's URL. */
async function freshTarget(engine: Engine): Promise<string> {
  return engine === "sqlite" ? join(tempDir(), "data", "laoding.db") : testDatabaseUrl();
}

async function openDriver(target: string): Promise<SqlDriver> {
  const driver = isPostgresUrl(target) ? await openPostgresDriver({ url: target }) : openSqliteDriver({ file: target });
  opened.push(driver);
  return driver;
}

async function openTracked(target: string): Promise<Store> {
  const store = await openStore(target, clock);
  opened.push(store);
  return store;
}

async function tableNames(driver: SqlDriver): Promise<string[]> {
  const rows =
    driver.engine === "sqlite"
      ? await driver.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await driver.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()",
        );
  return rows.map((row) => row.name);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

describe.each(STORE_ENGINES)("migrations on %s", (engine) => {
  it("migrates an empty database to the latest version", async () => {
    const driver = await openDriver(await freshTarget(engine));
    expect(await schemaVersion(driver)).toBe(0);
    await migrate(driver);
    expect(await schemaVersion(driver)).toBe(MIGRATIONS.at(-1)?.version);
    expect(latestVersion()).toBe(MIGRATIONS.at(-1)?.version);
    expect(await tableNames(driver)).toEqual(
      expect.arrayContaining(["sessions", "messages", "capability_gaps", "tool_calls"]),
    );
    if (driver.engine === "sqlite") {
      const db = (driver as SqliteDriver).database;
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    } else {
      // Millisecond times and row ids need 64 bits; row ids are identity columns.
      const columns = await driver.all<{ name: string; type: string; identity: string }>(
        "SELECT column_name AS name, data_type AS type, is_identity AS identity FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'sessions'",
      );
      expect(columns).toEqual(
        expect.arrayContaining([
          { name: "id", type: "bigint", identity: "YES" },
          { name: "created_at", type: "bigint", identity: "NO" },
        ]),
      );
    }
    // A second run is a no-op.
    await migrate(driver);
    expect(await schemaVersion(driver)).toBe(latestVersion());
  });

  it("applies migrations in version order, each once", async () => {
    const driver = await openDriver(await freshTarget(engine));
    const migrations: Migration[] = [
      { version: 3, name: "third", sql: "INSERT INTO steps (step, note) VALUES (3, 'c');" },
      { version: 1, name: "first", sql: "CREATE TABLE steps (step INTEGER NOT NULL);" },
      {
        version: 2,
        name: "second",
        sql: "ALTER TABLE steps ADD COLUMN note TEXT; INSERT INTO steps (step, note) VALUES (2, 'b');",
      },
    ];
    await migrate(driver, migrations);
    expect(await schemaVersion(driver)).toBe(3);
    await migrate(driver, migrations);
    expect(await driver.all("SELECT step, note FROM steps ORDER BY step")).toEqual([
      { step: 2, note: "b" },
      { step: 3, note: "c" },
    ]);
    // Only the new one runs when the list grows.
    await migrate(driver, [...migrations, { version: 4, name: "fourth", sql: "INSERT INTO steps (step) VALUES (4);" }]);
    expect(await driver.all("SELECT step FROM steps ORDER BY step")).toEqual([{ step: 2 }, { step: 3 }, { step: 4 }]);
    expect(await schemaVersion(driver)).toBe(4);
  });

  it("reopening is a no-op that keeps the data", async () => {
    const target = await freshTarget(engine);
    const store = await openTracked(target);
    const session = await store.sessions.activeSession("main", "console", "local");
    await store.messages.append({ sessionId: session.id, role: "user", content: "hi", traceId: "t1" });
    await store.close();
    const again = await openTracked(target);
    expect((await again.messages.bySession(session.id)).map((message) => message.content)).toEqual(["hi"]);
    expect(await schemaVersion(again.sql)).toBe(latestVersion());
  });

  it("refuses a database newer than the code", async () => {
    const target = await freshTarget(engine);
    if (engine === "sqlite") {
      const driver = openSqliteDriver({ file: target });
      driver.database.pragma("user_version = 999");
      await driver.close();
    } else {
      const driver = await openDriver(target);
      await driver.exec(
        "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version (version) VALUES (999)",
      );
      await driver.close();
    }
    const refused = /schema version 999, newer than this code knows \(\d+\)\. Upgrade LaodingBot/;
    const error = await rejection(openStore(target, clock));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toMatch(refused);
    const driver = await openDriver(target);
    await expect(migrate(driver)).rejects.toThrow(refused);
    expect(await schemaVersion(driver)).toBe(999);
    expect(await tableNames(driver)).not.toContain("sessions");
  });

  it("a failing migration leaves the database at its previous version", async () => {
    const target = await freshTarget(engine);
    const driver = await openDriver(target);
    await migrate(driver);
    const latest = latestVersion();
    const broken: Migration[] = [
      ...MIGRATIONS,
      {
        version: latest + 1,
        name: "broken",
        sql: "CREATE TABLE half_done (id INTEGER); INSERT INTO no_such_table VALUES (1);",
      },
    ];
    const error = await rejection(migrate(driver, broken));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toMatch(
      new RegExp(`migration ${latest + 1} \\(broken\\) failed.*stays at version ${latest}`),
    );
    expect(error.message).toMatch(/no_such_table/);
    expect(await schemaVersion(driver)).toBe(latest);
    expect(await tableNames(driver)).not.toContain("half_done");
    // The store still opens at the previous version, and the broken migration can be fixed and run.
    const store = await openTracked(target);
    expect(await schemaVersion(store.sql)).toBe(latest);
    await store.close();
    const fixed: Migration[] = [
      ...MIGRATIONS,
      { version: latest + 1, name: "fixed", sql: "CREATE TABLE half_done (id INTEGER);" },
    ];
    await migrate(driver, fixed);
    expect(await schemaVersion(driver)).toBe(latest + 1);
    expect(await tableNames(driver)).toContain("half_done");
  });

  if (engine === "sqlite") {
    it("reads the version of a file made by another tool", async () => {
      const target = await freshTarget(engine);
      const driver = openSqliteDriver({ file: target });
      await driver.close();
      const raw = new Database(target);
      raw.pragma("user_version = 3");
      raw.close();
      const again = await openDriver(target);
      expect(await schemaVersion(again)).toBe(3);
    });
  }
});

// The first repository checks, kept from open-database.test.ts when the store became async.
describe.each(STORE_ENGINES)("repositories on %s", (engine) => {
  async function store(): Promise<Store> {
    const fresh = await openTestStore(engine, { clock });
    opened.push(fresh);
    return fresh;
  }

  it("keeps one active session per chat and a fresh one after closing", async () => {
    const db = await store();
    const first = await db.sessions.activeSession("main", "telegram", "42");
    expect((await db.sessions.activeSession("main", "telegram", "42")).id).toBe(first.id);
    expect((await db.sessions.activeSession("other", "telegram", "42")).id).not.toBe(first.id);
    await db.sessions.closeActive("main", "telegram", "42");
    const second = await db.sessions.activeSession("main", "telegram", "42");
    expect(second.id).not.toBe(first.id);
    expect((await db.sessions.get(first.id))?.status).toBe("closed");
  });

  it("drops a message whose dedupe key was seen before", async () => {
    const db = await store();
    const session = await db.sessions.activeSession("main", "telegram", "42");
    const first = await db.messages.append({
      sessionId: session.id,
      role: "user",
      content: "a",
      traceId: "t1",
      dedupeKey: "telegram:42:7",
    });
    const again = await db.messages.append({
      sessionId: session.id,
      role: "user",
      content: "a",
      traceId: "t2",
      dedupeKey: "telegram:42:7",
    });
    expect(first).toBeTypeOf("number");
    expect(again).toBeUndefined();
    expect(await db.messages.seen("telegram:42:7")).toBe(true);
  });

  it("records gaps and tool calls by trace id, capping the user's text", async () => {
    const db = await store();
    const id = await db.gaps.record({
      agentId: "main",
      traceId: "t9",
      intentKey: "deploy-docker",
      reason: "no_skill",
      gapClass: "capability",
      userText: "x".repeat(2_000),
    });
    expect((await db.gaps.get(id))?.userText).toHaveLength(500);
    void db.toolCalls.record({
      traceId: "t9",
      agentId: "main",
      tool: "file.read",
      argsDigest: "abc",
      ok: false,
      errorCode: "PATH_NOT_FOUND",
      durationMs: 3.4,
    });
    expect(await db.toolCalls.byTrace("t9")).toMatchObject([
      { tool: "file.read", ok: 0, errorCode: "PATH_NOT_FOUND", durationMs: 3 },
    ]);
    expect(await db.gaps.byTrace("t9")).toHaveLength(1);
  });
});

describe.skipIf(!STORE_ENGINES.includes("postgres"))("migrations on postgres, several processes", () => {
  it("two migrate() runs started together on one fresh database both succeed and apply the schema once", async () => {
    const url = await testDatabaseUrl();
    const [first, second] = [await openDriver(url), await openDriver(url)] as [SqlDriver, SqlDriver];
    // The first migration dawdles, so without the lock both runs would be inside it at once.
    const counted: Migration[] = [
      { version: 1, name: "slow table", sql: "CREATE TABLE applied (run INTEGER NOT NULL); SELECT pg_sleep(0.3);" },
      { version: 2, name: "count", sql: "INSERT INTO applied (run) VALUES (1);" },
    ];
    await Promise.all([migrate(first, counted), migrate(second, counted)]);
    expect(await first.all("SELECT run FROM applied")).toEqual([{ run: 1 }]);
    expect(await first.all("SELECT version FROM schema_version")).toEqual([{ version: 2 }]);
    expect(await schemaVersion(second)).toBe(2);
  });

  it("two stores opened together on one fresh database both come up at the latest version", async () => {
    const url = await testDatabaseUrl();
    const [a, b] = await Promise.all([openTracked(url), openTracked(url)]);
    expect(await schemaVersion(a.sql)).toBe(latestVersion());
    expect(await schemaVersion(b.sql)).toBe(latestVersion());
    expect(await a.sql.all("SELECT version FROM schema_version")).toEqual([{ version: latestVersion() }]);
    const session = await a.sessions.activeSession("main", "console", "local");
    expect((await b.sessions.activeSession("main", "console", "local")).id).toBe(session.id);
  });

  it("a closed port fails openStore with a StoreError naming host:port and the network's words, never the password", async () => {
    const port = await closedPort();
    const password = "Sup3r-secret-pw";
    const error = await rejection(openStore(`postgres://laoding:${password}@127.0.0.1:${port}/laoding`, clock));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).toMatch(/DATABASE_URL/);
    expectNoSecret(error, password);
  });

  it("a wrong password fails openStore with a StoreError naming host:port and the server's words, never the password", async () => {
    const url = new URL(await testDatabaseUrl());
    const role = `pw_${process.pid}_${Date.now()}`;
    const right = "Right-pass-77";
    const wrong = "Wrong-pass-99";
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${right}' IN ROLE ${PASSWORD_ROLE_GROUP}`);
    } finally {
      await admin.end();
    }
    const withPassword = (password: string): string => {
      const target = new URL(url);
      target.username = role;
      target.password = password;
      return target.toString();
    };
    const error = await rejection(openStore(withPassword(wrong), clock));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain(`${url.hostname}:${url.port}`);
    expect(error.message).toContain(`password authentication failed for user "${role}"`);
    expectNoSecret(error, wrong);
    expectNoSecret(error, right);
    // The right one gets in: the failure above was the password, not the setup.
    const driver = await openDriver(withPassword(right));
    expect(await driver.get("SELECT current_user AS who")).toEqual({ who: role });
  });
});

function expectNoSecret(error: Error, secret: string): void {
  expect(error.message).not.toContain(secret);
  expect(String(error)).not.toContain(secret);
  expect(inspect(error, { depth: 6 })).not.toContain(secret);
  expect(error.message).not.toContain(encodeURIComponent(secret));
}

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
