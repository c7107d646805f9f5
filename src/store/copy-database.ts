/**
 * Moves an install's SQLite database to PostgreSQL (`laoding db copy`). The source is read
 * inside one read transaction on a read-only connection of its own, so every table comes
 * from the same moment even while something else writes (WAL readers see a snapshot). The
 * target is migrated to the latest schema first and must be empty unless resuming. Tables
 * are copied in STORE_TABLES order (referenced tables first), in batches, each batch one
 * transaction, with the source's ids and `ON CONFLICT DO NOTHING`: a repeated or resumed
 * copy adds only what is missing. Identity sequences then continue after the copied ids,
 * and the row counts of every table are compared at the end.
 */
import { existsSync } from "node:fs";
import type Database from "better-sqlite3";
import { describeDatabaseUrl, isPostgresUrl } from "./sql/database-url.js";
import { latestVersion, migrate, schemaVersion } from "./sql/migrate.js";
import { openPostgresDriver, type PostgresDriver } from "./sql/postgres-driver.js";
import type { SqlDriver, SqlValue } from "./sql/sql-driver.js";
import { openSqliteDriver } from "./sql/sqlite-driver.js";
import { STORE_TABLES } from "./tables.js";

export const DEFAULT_COPY_BATCH = 500;
/** PostgreSQL takes at most 65535 parameters per statement; a batch is split below that. */
const MAX_PARAMETERS = 60_000;

export type CopyProgress = { table: string; copied: number; total: number };

export type CopyOptions = {
  /** The SQLite file to copy (the workspace's data/laoding.db). */
  source: string;
  /** A postgres:// URL. */
  target: string;
  /** Continue into a target that already has rows (an interrupted or repeated copy). */
  resume?: boolean;
  /** Rows per transaction (default 500). */
  batchSize?: number;
  /** When a table starts (copied 0) and after each of its batches. */
  onProgress?: (progress: CopyProgress) => void;
};

export type CopiedTable = { table: string; rows: number; inserted: number; target: number };

export type CopyResult = {
  /** host:port/database of the target. */
  target: string;
  schemaVersion: number;
  tables: CopiedTable[];
  rows: number;
  inserted: number;
  elapsedMs: number;
};

/** A copy that cannot start or did not verify; the message says what to do. */
export class CopyError extends Error {
  override readonly name = "CopyError";
}

/** Without a password: error texts go through the redactor, which would blank `user:password@`. */
const EXPECTED_URL = "postgres://USER@HOST:5432/DATABASE";

/** Why `target` is not a PostgreSQL URL, without echoing it (it may hold a password). */
export function checkTargetUrl(target: string): void {
  if (isPostgresUrl(target)) {
    try {
      new URL(target);
      return;
    } catch {
      throw new CopyError(
        `the target is not a valid URL; expected ${EXPECTED_URL} (percent-encode special characters in the password)`,
      );
    }
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target)?.[1];
  throw new CopyError(
    `the target must be a PostgreSQL URL such as ${EXPECTED_URL}, not ${scheme ? `a ${scheme}: URL` : "a file path or other text"}`,
  );
}

export async function copyDatabase(options: CopyOptions): Promise<CopyResult> {
  const started = performance.now();
  const batchSize = options.batchSize ?? DEFAULT_COPY_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new CopyError(`the batch size must be a whole number of at least 1, not ${batchSize}`);
  checkTargetUrl(options.target);
  if (!existsSync(options.source)) throw new CopyError(`no SQLite database at ${options.source}: nothing to copy`);

  const source = openSqliteDriver({ file: options.source, readonly: true });
  try {
    const db = source.database;
    const latest = latestVersion();
    const version = await schemaVersion(source);
    if (version < latest) {
      throw new CopyError(
        `the SQLite database ${options.source} is at schema version ${version} and this code's is ${latest}: ` +
          "run `laoding start` (or any command that opens the store, such as `laoding gaps`) once on this workspace to migrate it, then copy again",
      );
    }
    if (version > latest)
      throw new CopyError(
        `the SQLite database ${options.source} is at schema version ${version}, newer than this code knows (${latest}): upgrade LaodingBot first`,
      );
    const present = (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[]
    ).sort();
    const unknown = present.filter((name) => !(STORE_TABLES as readonly string[]).includes(name));
    const missing = STORE_TABLES.filter((name) => !present.includes(name));
    if (unknown.length > 0 || missing.length > 0) {
      throw new CopyError(
        `the SQLite database ${options.source} does not have the tables this code copies` +
          `${unknown.length > 0 ? ` (unknown: ${unknown.join(", ")})` : ""}${missing.length > 0 ? ` (missing: ${missing.join(", ")})` : ""}`,
      );
    }

    const target = await openPostgresDriver({
      url: options.target,
      maxConnections: 2,
      applicationName: "laoding db copy",
    });
    try {
      await migrate(target);
      const label = target.label;
      const before = await countRows(target);
      const occupied = STORE_TABLES.filter((table) => (before[table] ?? 0) > 0);
      if (occupied.length > 0 && !options.resume) {
        throw new CopyError(
          `PostgreSQL at ${label} is not empty (${occupied.map((table) => `${table}: ${before[table]} rows`).join(", ")}): ` +
            "copy into an empty database, or pass --resume to finish an interrupted copy into this one",
        );
      }

      // One read transaction: the counts and every batch see the same snapshot of the file.
      db.exec("BEGIN");
      try {
        const tables: CopiedTable[] = [];
        for (const table of STORE_TABLES)
          tables.push(await copyTable(db, target, table, batchSize, options.onProgress));
        const after = await countRows(target);
        const differing = tables.filter((table) => (after[table.table] ?? 0) !== table.rows);
        for (const table of tables) table.target = after[table.table] ?? 0;
        if (differing.length > 0) {
          throw new CopyError(
            `row counts differ after the copy to ${label}: ${differing.map((table) => `${table.table} (SQLite ${table.rows}, PostgreSQL ${after[table.table] ?? 0})`).join(", ")}` +
              `${options.resume ? "; the target held rows the source does not have, or rows that clash on a unique key" : ""}`,
          );
        }
        const rows = tables.reduce((sum, table) => sum + table.rows, 0);
        const inserted = tables.reduce((sum, table) => sum + table.inserted, 0);
        return {
          target: label,
          schemaVersion: version,
          tables,
          rows,
          inserted,
          elapsedMs: performance.now() - started,
        };
      } finally {
        if (db.inTransaction) db.exec("COMMIT");
      }
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function copyTable(
  db: Database.Database,
  target: PostgresDriver,
  table: string,
  batchSize: number,
  onProgress: CopyOptions["onProgress"],
): Promise<CopiedTable> {
  const columns = (db.pragma(`table_info(${table})`) as { name: string; pk: number }[]).map((column) => column.name);
  const total = (db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number) ?? 0;
  // Pages by rowid (every store table has one; it is the id where there is one), so a page never re-reads the one before.
  const page = db.prepare(`SELECT rowid, * FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT ?`).raw(true);
  const rowsPerStatement = Math.max(1, Math.min(batchSize, Math.floor(MAX_PARAMETERS / columns.length)));
  const statements = new Map<number, string>();
  const insertSql = (rows: number): string => {
    let sql = statements.get(rows);
    if (!sql) {
      const tuple = `(${columns.map(() => "?").join(", ")})`;
      sql = `INSERT INTO ${table} (${columns.map((column) => `"${column}"`).join(", ")}) VALUES ${Array.from({ length: rows }, () => tuple).join(", ")} ON CONFLICT DO NOTHING`;
      statements.set(rows, sql);
    }
    return sql;
  };

  onProgress?.({ table, copied: 0, total });
  let copied = 0;
  let inserted = 0;
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const batch = page.all(after, batchSize) as SqlValue[][];
    if (batch.length === 0) break;
    const first = batch[0]?.[0];
    after = batch[batch.length - 1]?.[0] as number;
    try {
      inserted += await target.transaction(async () => {
        let added = 0;
        for (let start = 0; start < batch.length; start += rowsPerStatement) {
          const chunk = batch.slice(start, start + rowsPerStatement);
          const values: SqlValue[] = [];
          for (const row of chunk)
            for (let index = 1; index < row.length; index += 1) values.push(row[index] as SqlValue);
          added += (await target.run(insertSql(chunk.length), values)).changes;
        }
        return added;
      });
    } catch (error) {
      throw new CopyError(
        `copying ${table} (source rows ${first}..${after}) to ${target.label} failed: ${(error as Error).message}${nulHint(batch, columns)}`,
        { cause: error },
      );
    }
    copied += batch.length;
    onProgress?.({ table, copied, total });
  }
  if (columns.includes("id")) {
    // The identity continues after the copied ids: the next row the bot writes gets MAX(id) + 1.
    await target.get(
      `SELECT setval(pg_get_serial_sequence('${table}', 'id'), COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM ${table}`,
    );
  }
  return { table, rows: copied, inserted, target: 0 };
}

/** PostgreSQL text cannot hold U+0000, which SQLite stores happily: name the row that has one. */
function nulHint(batch: SqlValue[][], columns: string[]): string {
  for (const row of batch) {
    for (let index = 1; index < row.length; index += 1) {
      const value = row[index];
      if (typeof value === "string" && value.includes("\u0000"))
        return `; row ${row[0]} has a NUL character (U+0000) in ${columns[index - 1]}, which PostgreSQL text cannot hold`;
    }
  }
  return "";
}

/** Rows of every store table, in STORE_TABLES order; null for a table this database does not have (yet). */
export async function countRows(driver: SqlDriver): Promise<Record<string, number | null>> {
  const present = new Set(await existingTables(driver));
  const counts: Record<string, number | null> = {};
  for (const table of STORE_TABLES) {
    counts[table] = present.has(table)
      ? ((await driver.get<{ count: number }>(`SELECT COUNT(*) AS count FROM ${table}`))?.count ?? 0)
      : null;
  }
  return counts;
}

/** Which of the store's tables exist in this database. */
export async function existingTables(driver: SqlDriver): Promise<string[]> {
  const rows =
    driver.engine === "sqlite"
      ? await driver.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await driver.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()",
        );
  const names = new Set(rows.map((row) => row.name));
  return STORE_TABLES.filter((table) => names.has(table));
}

/** host:port/database for a URL, the path for a file. */
export function describeTarget(target: string): string {
  return isPostgresUrl(target) ? describeDatabaseUrl(target) : target;
}
