/**
 * Opens the SQLite store (WAL, busy timeout, foreign keys) and brings its schema up
 * to date. Each migration runs in its own transaction together with the bump of
 * `PRAGMA user_version`, so a failing migration leaves the previous version intact.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { MIGRATIONS, type Migration } from "./migrations.js";

export type Db = Database.Database;

export class StoreError extends Error {
  override readonly name = "StoreError";
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export type OpenDatabaseOptions = {
  file: string;
  migrations?: Migration[];
  busyTimeoutMs?: number;
  readonly?: boolean;
};

export function openDatabase(options: OpenDatabaseOptions): Db {
  const migrations = options.migrations ?? MIGRATIONS;
  if (options.file !== ":memory:") mkdirSync(dirname(options.file), { recursive: true });
  let db: Db;
  try {
    db = new Database(options.file, { readonly: options.readonly ?? false });
  } catch (error) {
    throw new StoreError(`cannot open database ${options.file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      // NORMAL is durable across process crashes in WAL mode; only power loss can drop
      // the last commits.
      db.pragma("synchronous = NORMAL");
    }
    db.pragma("foreign_keys = ON");
    migrate(db, migrations, options.file);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

export function schemaVersion(db: Db): number {
  return db.pragma("user_version", { simple: true }) as number;
}

function migrate(db: Db, migrations: Migration[], file: string): void {
  const latest = migrations.reduce((max, migration) => Math.max(max, migration.version), 0);
  const current = schemaVersion(db);
  if (current > latest) {
    throw new StoreError(
      `database ${file} has schema version ${current}, newer than this code knows (${latest}). ` +
        "Upgrade LaodingBot, or restore a backup made for this version",
    );
  }
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (migration.version <= current) continue;
    const apply = db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    try {
      apply();
    } catch (error) {
      throw new StoreError(
        `migration ${migration.version} (${migration.name}) failed on ${file}: ${(error as Error).message}; ` +
          `the database stays at version ${schemaVersion(db)}`,
        { cause: error },
      );
    }
  }
}
