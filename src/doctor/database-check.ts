/**
 * The SQLite store's integrity (`PRAGMA quick_check`) and schema version, read-only: the
 * file is opened with `readonly` and `fileMustExist`, so the doctor neither creates nor
 * migrates it, and a running bot may keep writing meanwhile (WAL). With DATABASE_URL the
 * PostgreSQL server is checked instead: one connection, the schema version read (never
 * migrated), and the server's own words when it refuses.
 */
import Database from "better-sqlite3";
import { MIGRATIONS } from "../store/migrations.js";
import { describeDatabaseUrl } from "../store/sql/database-url.js";
import { schemaVersion } from "../store/sql/migrate.js";
import { openPostgresDriver, serverWords, type PostgresDriver } from "../store/sql/postgres-driver.js";
import { failed, passed, type CheckResult } from "./check-result.js";

/** At most this many of quick_check's complaints are shown: the first few say enough. */
const SHOWN_PROBLEMS = 3;

const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));
const UPGRADE_FIX =
  "Upgrade LaodingBot to the version that wrote it (git pull && npm ci && npm run build), or restore a backup made for this version";

export function checkDatabase(
  file: string,
  exists: (path: string) => boolean,
  latestVersion = LATEST_VERSION,
): CheckResult {
  const title = `database ${file}`;
  if (!exists(file)) return passed("database", `${title} (not created yet: \`laoding start\` creates it)`);
  const recover = `Stop the bot, keep the file (cp ${file} ${file}.broken), then recover what can be read (sqlite3 ${file}.broken .recover | sqlite3 ${file}.recovered, and move that into place), or move the file aside to start with an empty database`;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma("quick_check") as { quick_check: string }[];
    const problems = rows.map((row) => row.quick_check).filter((text) => text !== "ok");
    if (problems.length > 0)
      return failed(
        "database",
        title,
        `PRAGMA quick_check found ${problems.length} problem(s): ${problems.slice(0, SHOWN_PROBLEMS).join("; ")}`,
        recover,
      );
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > latestVersion) {
      return failed(
        "database",
        title,
        `schema version ${version} is newer than this code knows (${latestVersion})`,
        UPGRADE_FIX,
      );
    }
    return passed(
      "database",
      `${title} (quick_check ok, schema version ${version}${version < latestVersion ? `; \`laoding start\` migrates it to ${latestVersion}` : ""})`,
    );
  } catch (error) {
    return failed("database", title, `cannot be read: ${(error as Error).message}`, recover);
  } finally {
    db?.close();
  }
}

/**
 * DATABASE_URL's server: it accepts a connection (address, credentials, database, TLS) and
 * its schema is one this code knows. Only read: an empty database stays empty until
 * `laoding start` migrates it. The title names the engine and host:port/database, never the
 * password; a refusal is the server's (or the network's) own words.
 */
export async function checkPostgresDatabase(
  url: string,
  latestVersion = LATEST_VERSION,
  open: (url: string) => Promise<PostgresDriver> = connectOnce,
): Promise<CheckResult> {
  const title = `database PostgreSQL ${describeDatabaseUrl(url)}`;
  let driver: PostgresDriver;
  try {
    driver = await open(url);
  } catch (error) {
    return failed(
      "database",
      title,
      `cannot connect: ${serverWords((error as { cause?: unknown }).cause ?? error)}`,
      "Check DATABASE_URL (host, port, user, password, database name, sslmode), that the server is running and reachable from this host, and that it lets this user connect (pg_hba.conf, GRANT CONNECT)",
    );
  }
  try {
    const version = await schemaVersion(driver);
    if (version > latestVersion)
      return failed(
        "database",
        title,
        `schema version ${version} is newer than this code knows (${latestVersion})`,
        UPGRADE_FIX,
      );
    if (version === 0) return passed("database", `${title} (connected; no tables yet: \`laoding start\` creates them)`);
    return passed(
      "database",
      `${title} (connected, schema version ${version}${version < latestVersion ? `; \`laoding start\` migrates it to ${latestVersion}` : ""})`,
    );
  } catch (error) {
    return failed(
      "database",
      title,
      `cannot read the schema version: ${serverWords((error as { cause?: unknown }).cause ?? error)}`,
      "Give DATABASE_URL's user the right to read the database's tables (GRANT USAGE ON SCHEMA, GRANT SELECT), or point DATABASE_URL at LaodingBot's own database",
    );
  } finally {
    await driver.close();
  }
}

function connectOnce(url: string): Promise<PostgresDriver> {
  return openPostgresDriver({ url, maxConnections: 1, applicationName: "laoding-doctor" });
}
