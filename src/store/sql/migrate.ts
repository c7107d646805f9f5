/**
 * Brings a database's schema up to date with the numbered migrations, on either engine:
 * the same numbers and the same text (PostgreSQL gets it through toPostgresSchema). Each
 * migration commits together with the new version number, so a failing one leaves the
 * previous version intact. A database at a newer version than this code knows is refused.
 * On PostgreSQL the run holds an advisory lock: replicas starting together migrate once.
 */
import { MIGRATIONS, type Migration } from "../migrations.js";
import type { PostgresDriver } from "./postgres-driver.js";
import { toPostgresSchema } from "./postgres-dialect.js";
import { StoreError, type SqlDriver } from "./sql-driver.js";
import type { SqliteDriver } from "./sqlite-driver.js";

/** pg_advisory_lock key of the migration run ("laod" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x6c616f64;

export function latestVersion(migrations: Migration[] = MIGRATIONS): number {
  return migrations.reduce((max, migration) => Math.max(max, migration.version), 0);
}

export async function schemaVersion(driver: SqlDriver): Promise<number> {
  if (driver.engine === "sqlite")
    return (driver as SqliteDriver).database.pragma("user_version", { simple: true }) as number;
  const table = await driver.get<{ present: number }>(
    `SELECT COUNT(*) AS present FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_version'`,
  );
  if (!table || table.present === 0) return 0;
  const row = await driver.get<{ version: number }>(`SELECT version FROM schema_version`);
  return row?.version ?? 0;
}

export async function migrate(driver: SqlDriver, migrations: Migration[] = MIGRATIONS): Promise<void> {
  const ordered = [...migrations].sort((a, b) => a.version - b.version);
  if (driver.engine === "sqlite") return migrateSqlite(driver as SqliteDriver, ordered);
  return migratePostgres(driver as PostgresDriver, ordered);
}

function refuseNewer(current: number, latest: number, label: string): void {
  if (current > latest) {
    throw new StoreError(
      `database ${label} has schema version ${current}, newer than this code knows (${latest}). ` +
        "Upgrade LaodingBot, or restore a backup made for this version",
    );
  }
}

function migrationFailed(migration: Migration, label: string, error: unknown, stays: number): StoreError {
  return new StoreError(
    `migration ${migration.version} (${migration.name}) failed on ${label}: ${(error as Error).message}; the database stays at version ${stays}`,
    { cause: error },
  );
}

function migrateSqlite(driver: SqliteDriver, migrations: Migration[]): void {
  const db = driver.database;
  const current = db.pragma("user_version", { simple: true }) as number;
  refuseNewer(current, latestVersion(migrations), driver.label);
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    const apply = db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    });
    try {
      apply();
    } catch (error) {
      throw migrationFailed(migration, driver.label, error, db.pragma("user_version", { simple: true }) as number);
    }
  }
}

async function migratePostgres(driver: PostgresDriver, migrations: Migration[]): Promise<void> {
  const client = await driver.connect();
  // A server that drops the connection mid-migration fails the running query; the client's own error event must not end the process.
  const ignore = () => undefined;
  client.on("error", ignore);
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
      const rows = (await client.query<{ version: number }>("SELECT version FROM schema_version")).rows;
      let current = rows[0]?.version ?? 0;
      if (rows.length === 0) await client.query("INSERT INTO schema_version (version) VALUES (0)");
      refuseNewer(current, latestVersion(migrations), driver.label);
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        try {
          await client.query("BEGIN");
          await client.query(toPostgresSchema(migration.postgres ?? migration.sql));
          await client.query("UPDATE schema_version SET version = $1", [migration.version]);
          await client.query("COMMIT");
          current = migration.version;
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw migrationFailed(migration, driver.label, error, current);
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    client.off("error", ignore);
    client.release();
  }
}
