import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/store/clock.js";
import {
  checkTargetUrl,
  copyDatabase,
  CopyError,
  countRows,
  type CopyProgress,
} from "../../src/store/copy-database.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { latestVersion, migrate } from "../../src/store/sql/migrate.js";
import { openSqliteDriver } from "../../src/store/sql/sqlite-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { STORE_TABLES } from "../../src/store/tables.js";
import { tempDir } from "../helpers/temp-dir.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const withPostgres = STORE_ENGINES.includes("postgres");

/** A SQLite install with rows in the tables a bot fills: chats, gaps, lessons with tags, the channel inbox and outbox, audits, leases. */
async function seededSqlite(options: { messages?: number } = {}): Promise<string> {
  const file = join(tempDir(), "data", "laoding.db");
  const store = await openStore(file, systemClock);
  try {
    await seed(store, options.messages ?? 40);
  } finally {
    await store.close();
  }
  return file;
}

async function seed(store: Store, messages: number): Promise<void> {
  const sessions = [
    await store.sessions.activeSession("main", "telegram", "chat-1"),
    await store.sessions.activeSession("main", "telegram", "chat-2"),
  ];
  await store.sessions.closeActive("main", "telegram", "chat-2");
  sessions.push(await store.sessions.activeSession("main", "telegram", "chat-2"));
  await store.transaction(async () => {
    for (let index = 0; index < messages; index += 1) {
      const session = sessions[index % sessions.length] as { id: number };
      await store.messages.append({
        sessionId: session.id,
        role: index % 2 === 0 ? "user" : "assistant",
        content: `message ${index} — 你好 'quoted' "double" \\ backslash`,
        traceId: `trace-${Math.floor(index / 2)}`,
        ...(index % 2 === 0 ? { userId: "u1", dedupeKey: `telegram:chat:${index}` } : {}),
        ...(index % 7 === 1 ? { toolCalls: [{ name: "shell", arguments: '{"cmd":"ls"}' }] } : {}),
      });
    }
  });
  await store.sessions.setSummary(sessions[0]?.id as number, "the summary", 3);
  await store.gaps.record({
    agentId: "main",
    sessionId: sessions[0]?.id as number,
    traceId: "trace-1",
    intentKey: "convert_pdf",
    reason: "tool_missing",
    gapClass: "capability",
    tool: "shell",
    detail: "no pdftotext",
  });
  await store.clusters.rememberKey("main", "convert_pdf", "pdf convert");
  await store.clusters.claimDraft("main", "convert_pdf", "auto_convert_pdf", 3);
  await store.agentSettings.setExperienceLibrary("main", false);
  const admitted = await store.channels.admit(["telegram:update:1"], {
    botKey: "main",
    chatId: "chat-1",
    message: "hello",
  });
  const inboxId = admitted.duplicate ? undefined : admitted.inboxId;
  const parts = await store.channels.storeReply({
    botKey: "main",
    chatId: "chat-1",
    ...(inboxId === undefined ? {} : { inboxId }),
    parts: ["part one", "part two"],
  });
  await store.channels.sent(parts[0] as number, "42");
  const lesson = await store.experiences.add({
    agentId: "main",
    source: "error_correction",
    summary: "Pass --force-tls when you deploy the gateway; it rejects plain connections.",
    category: "pitfall",
    confidence: 0.75,
    createdBy: "distiller",
    contentHash: "hash-1",
    tags: ["deploy", "gateway"],
  });
  await store.experiences.add({
    agentId: "main",
    source: "manual",
    summary: "Check the disk before a large download.",
    category: "best_practice",
    confidence: 0.5,
    createdBy: "operator",
    contentHash: "hash-2",
    tags: ["disk"],
  });
  await store.injections.record("main", "trace-1", "treatment", [lesson.id]);
  await store.injections.settle("trace-1", "success");
  await store.distillRuns.record({
    agentId: "main",
    traceId: "trace-1",
    promptVersion: 1,
    status: "skipped",
    skipReason: "routine",
    outcome: "success",
    tags: ["deploy"],
  });
  await store.rules.add("main", "Always answer in the user's language.", "operator", "operator");
  await store.modelCalls.record({
    traceId: "trace-1",
    agentId: "main",
    purpose: "chat",
    model: "m",
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    ok: true,
    durationMs: 12,
  });
  void store.toolCalls.record({
    traceId: "trace-1",
    agentId: "main",
    sessionId: sessions[0]?.id as number,
    tool: "shell",
    argsDigest: "abc",
    ok: true,
    durationMs: 3,
  });
  await store.toolCalls.flush();
  await store.leases.acquire("chat:main:chat-1", "replica-a", 30_000);
}

async function sqliteCounts(file: string): Promise<Record<string, number | null>> {
  const driver = openSqliteDriver({ file, readonly: true });
  try {
    return await countRows(driver);
  } finally {
    await driver.close();
  }
}

describe("STORE_TABLES", () => {
  it("names every table the migrations create, each after the tables it references", async () => {
    const driver = openSqliteDriver({ file: join(tempDir(), "laoding.db") });
    try {
      await migrate(driver);
      const tables = (
        await driver.all<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
      ).map((row) => row.name);
      expect([...STORE_TABLES].sort()).toEqual(tables);
      for (const [index, table] of STORE_TABLES.entries()) {
        const references = await driver.all<{ table: string }>(
          `SELECT "table" FROM pragma_foreign_key_list('${table}')`,
        );
        for (const { table: referenced } of references)
          expect(STORE_TABLES.indexOf(referenced as never), `${table} references ${referenced}`).toBeLessThan(index);
      }
    } finally {
      await driver.close();
    }
  });
});

describe("checkTargetUrl", () => {
  it("accepts postgres:// and postgresql:// URLs and refuses anything else without echoing it", () => {
    expect(() => checkTargetUrl("postgres://u:p@db:5432/laoding")).not.toThrow();
    expect(() => checkTargetUrl("postgresql://db/laoding?sslmode=require")).not.toThrow();
    expect(() => checkTargetUrl("mysql://root:hunter22@db/laoding")).toThrow(
      /must be a PostgreSQL URL such as postgres:\/\/USER@HOST:5432\/DATABASE, not a mysql: URL$/,
    );
    expect(() => checkTargetUrl("/srv/laoding.db")).toThrow(/not a file path or other text/);
    try {
      checkTargetUrl("mysql://root:hunter22@db/laoding");
    } catch (error) {
      expect((error as Error).message).not.toContain("hunter22");
    }
  });
});

describe("copyDatabase, source checks", () => {
  it("refuses a missing file and a source at an older schema version, saying how to migrate it", async () => {
    await expect(
      copyDatabase({ source: join(tempDir(), "none.db"), target: "postgres://127.0.0.1:1/x" }),
    ).rejects.toThrow(/no SQLite database at .*none\.db: nothing to copy/);
    const file = join(tempDir(), "old.db");
    const driver = openSqliteDriver({ file });
    await migrate(
      driver,
      MIGRATIONS.filter((migration) => migration.version < latestVersion()),
    );
    await driver.close();
    const copied = copyDatabase({ source: file, target: "postgres://127.0.0.1:1/x" });
    await expect(copied).rejects.toBeInstanceOf(CopyError);
    await expect(copied).rejects.toThrow(
      new RegExp(`schema version ${latestVersion() - 1} and this code's is ${latestVersion()}: run \`laoding start\``),
    );
  });

  it("refuses a target that is not a PostgreSQL URL", async () => {
    const file = await seededSqlite({ messages: 2 });
    await expect(copyDatabase({ source: file, target: join(tempDir(), "other.db") })).rejects.toThrow(
      /must be a PostgreSQL URL/,
    );
  });
});

describe.skipIf(!withPostgres)("copyDatabase to PostgreSQL", () => {
  it("copies every table with its ids, verifies the counts, and the target's ids continue after the copied ones", async () => {
    const file = await seededSqlite({ messages: 40 });
    const source = await sqliteCounts(file);
    const url = await testDatabaseUrl();
    const progress: CopyProgress[] = [];
    const result = await copyDatabase({
      source: file,
      target: url,
      batchSize: 7,
      onProgress: (step) => progress.push(step),
    });

    expect(result.target).toMatch(/^127\.0\.0\.1:\d+\/t_/);
    expect(result.schemaVersion).toBe(latestVersion());
    expect(result.tables.map((table) => table.table)).toEqual([...STORE_TABLES]);
    for (const table of result.tables) {
      expect(table.rows, table.table).toBe(source[table.table]);
      expect(table.target, table.table).toBe(source[table.table]);
      expect(table.inserted, table.table).toBe(source[table.table]);
    }
    expect(source.messages).toBe(40);
    expect(source.sessions).toBe(3);
    expect(source.experience_tags).toBe(3);
    expect(source.channel_outbox).toBe(2);
    expect(result.rows).toBe(Object.values(source).reduce<number>((sum, count) => sum + (count ?? 0), 0));
    // Progress: a start line per table, then one per batch of 7 (40 messages: 7, 14, ... 35, 40).
    expect(progress.filter((step) => step.table === "messages").map((step) => step.copied)).toEqual([
      0, 7, 14, 21, 28, 35, 40,
    ]);
    for (const table of STORE_TABLES)
      expect(progress.filter((step) => step.table === table).at(-1)).toEqual({
        table,
        copied: source[table],
        total: source[table],
      });

    const before = await openStore(file, systemClock);
    const target = await openStore(url, systemClock);
    try {
      expect(target.engine).toBe("postgres");
      const [sqliteSession, copiedSession] = [
        await before.sessions.findActive("main", "telegram", "chat-1"),
        await target.sessions.findActive("main", "telegram", "chat-1"),
      ];
      expect(copiedSession).toEqual(sqliteSession);
      expect(await target.messages.bySession(copiedSession?.id as number)).toEqual(
        await before.messages.bySession(sqliteSession?.id as number),
      );
      expect(await target.experiences.list("main")).toEqual(await before.experiences.list("main"));
      expect(await target.channels.outbox(2)).toEqual(await before.channels.outbox(2));
      expect(await target.messages.seen("telegram:chat:0")).toBe(true);

      // The identity sequences continue after the copied ids.
      const maxMessage = (await target.sql.get<{ id: number }>("SELECT MAX(id) AS id FROM messages"))?.id as number;
      expect(maxMessage).toBe(40);
      const next = await target.messages.append({
        sessionId: copiedSession?.id as number,
        role: "user",
        content: "after the move",
        traceId: "t-next",
      });
      expect(next).toBe(41);
      const session = await target.sessions.activeSession("main", "feishu", "chat-9");
      expect(session.id).toBe(4);
      const lesson = await target.experiences.add({
        agentId: "main",
        source: "manual",
        summary: "A lesson written after the move to PostgreSQL.",
        category: "pattern",
        confidence: 0.5,
        createdBy: "operator",
        contentHash: "hash-3",
        tags: ["move"],
      });
      expect(lesson.id).toBe(3);
      const parts = await target.channels.storeReply({ botKey: "main", chatId: "chat-1", parts: ["again"] });
      expect(parts).toEqual([3]);
      // Tables that were empty start at 1.
      expect(
        (
          await target.sql.get<{ id: number }>(
            "INSERT INTO skill_distill_requests (agent_id, tag, requested_at) VALUES ('main', 'x', 1) RETURNING id",
          )
        )?.id,
      ).toBe(1);
    } finally {
      await before.close();
      await target.close();
    }
  });

  it("refuses a non-empty target unless resuming; a resumed copy adds only what is missing and is idempotent", async () => {
    const file = await seededSqlite({ messages: 30 });
    const url = await testDatabaseUrl();
    const first = await copyDatabase({ source: file, target: url });
    expect(first.inserted).toBe(first.rows);

    const again = copyDatabase({ source: file, target: url });
    await expect(again).rejects.toBeInstanceOf(CopyError);
    await expect(again).rejects.toThrow(
      /^PostgreSQL at 127\.0\.0\.1:\d+\/t_\w+ is not empty \(sessions: 3 rows, messages: 30 rows, .*\): copy into an empty database, or pass --resume/,
    );

    const resumed = await copyDatabase({ source: file, target: url, resume: true });
    expect(resumed.rows).toBe(first.rows);
    expect(resumed.inserted).toBe(0);

    // An interrupted copy: the target has only part of the rows.
    const target = await openStore(url, systemClock);
    try {
      await target.sql.run("DELETE FROM messages WHERE id > 12");
      await target.sql.run("DELETE FROM experience_tags WHERE tag = 'disk'");
    } finally {
      await target.close();
    }
    const finished = await copyDatabase({ source: file, target: url, resume: true, batchSize: 5 });
    expect(finished.tables.find((table) => table.table === "messages")).toMatchObject({
      rows: 30,
      inserted: 18,
      target: 30,
    });
    expect(finished.tables.find((table) => table.table === "experience_tags")).toMatchObject({
      rows: 3,
      inserted: 1,
      target: 3,
    });
    expect(finished.inserted).toBe(19);
  });

  it("refuses a target that a bot already wrote to, naming the tables that have rows", async () => {
    const file = await seededSqlite({ messages: 2 });
    const url = await testDatabaseUrl();
    const other = await openStore(url, systemClock);
    await other.sessions.activeSession("main", "console", "local");
    await other.close();
    await expect(copyDatabase({ source: file, target: url })).rejects.toThrow(/is not empty \(sessions: 1 rows\)/);
  });

  it("fails the verification when a resumed target holds rows the source does not, naming the tables", async () => {
    const file = await seededSqlite({ messages: 2 });
    const url = await testDatabaseUrl();
    await copyDatabase({ source: file, target: url });
    const target = await openStore(url, systemClock);
    await target.rules.add("main", "A rule written on PostgreSQL only.", "operator", "operator");
    await target.close();
    await expect(copyDatabase({ source: file, target: url, resume: true })).rejects.toThrow(
      /row counts differ after the copy to 127\.0\.0\.1:\d+\/t_\w+: memory_ledger \(SQLite 3, PostgreSQL 4\), rules \(SQLite 1, PostgreSQL 2\); the target held rows/,
    );
  });

  it("splits a large batch below PostgreSQL's parameter limit and reads one snapshot", async () => {
    const file = await seededSqlite({ messages: 0 });
    const driver = openSqliteDriver({ file });
    const insert = driver.database.prepare(
      "INSERT INTO messages (session_id, role, kind, content, trace_id, created_at) VALUES (1, 'user', 'chat', ?, 't', 1)",
    );
    driver.database.transaction(() => {
      for (let index = 0; index < 12_000; index += 1) insert.run(`row ${index}`);
    })();
    // A writer keeps adding rows while the copy runs: the copy holds to the moment its read began.
    let written = 0;
    const writer = setInterval(() => {
      insert.run("late");
      written += 1;
    }, 1);
    let copied: number;
    try {
      const url = await testDatabaseUrl();
      const result = await copyDatabase({ source: file, target: url, batchSize: 10_000 });
      const messages = result.tables.find((table) => table.table === "messages");
      copied = messages?.rows as number;
      expect(messages?.target).toBe(copied);
      expect(copied).toBeGreaterThanOrEqual(12_000);
    } finally {
      clearInterval(writer);
    }
    const after = driver.database.prepare("SELECT COUNT(*) FROM messages").pluck().get() as number;
    await driver.close();
    expect(after).toBe(12_000 + written);
    expect(after).toBeGreaterThan(copied);
  });
});
