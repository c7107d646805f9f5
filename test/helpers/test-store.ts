/**
 * Stores for tests, on every engine this run has: a temp SQLite file, or a fresh database
 * on the run's PostgreSQL server (started by test/helpers/postgres-global-setup.ts).
 *
 *   describe.each(STORE_ENGINES)("%s", (engine) => {
 *     it("...", async () => {
 *       const store = await openTestStore(engine);
 *       ...
 *       await store.close(); // also removes the file or drops the database
 *     });
 *   });
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { systemClock, type Clock } from "../../src/store/clock.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { migrate } from "../../src/store/sql/migrate.js";
import { openPostgresDriver } from "../../src/store/sql/postgres-driver.js";
import type { Engine } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";

export type { Engine };

function adminUrlOfRun(): string {
  try {
    const provided = inject("laodingPostgresAdminUrl");
    if (typeof provided === "string") return provided;
  } catch {
    // Outside a vitest worker: the environment variable the global setup exported.
  }
  return process.env.LAODING_TEST_POSTGRES_ADMIN_URL ?? "";
}

const ADMIN_URL = adminUrlOfRun();

/** The engines store tests run on: SQLite always, PostgreSQL when the run's test server is up (always in CI). */
export const STORE_ENGINES: Engine[] = ADMIN_URL ? ["sqlite", "postgres"] : ["sqlite"];

let admin: pg.Pool | undefined;
function adminPool(): pg.Pool {
  if (!ADMIN_URL)
    throw new Error(
      "this test run has no PostgreSQL server (test/helpers/postgres-global-setup.ts did not start one): check STORE_ENGINES first",
    );
  // Few connections, closed when idle, so the worker can exit without closing it.
  admin ??= new pg.Pool({ connectionString: ADMIN_URL, max: 2, idleTimeoutMillis: 2_000, allowExitOnIdle: true });
  return admin;
}

// Names unique across the run's workers (pool id and pid) and within one (a counter).
const NAME_PREFIX = `t_${process.env.VITEST_POOL_ID ?? "0"}_${process.pid}_`;
let databases = 0;
/** pg_advisory_lock key taken while the migrated template is built (not the store's migration key). */
const TEMPLATE_LOCK_KEY = 0x6c74706c;

async function createDatabase(template = "template0"): Promise<{ name: string; url: string }> {
  databases += 1;
  const name = `${NAME_PREFIX}${databases}`;
  // FILE_COPY: with fsync off it is several times faster than the default WAL_LOG copy.
  await adminPool().query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY`);
  return { name, url: databaseUrl(name) };
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A database holding the current migrations' schema and nothing else, built once per run
 * (named after the migrations' text, so an edited migration gets a new one) and copied for
 * each store: copying is much faster than migrating. openStore still runs migrate() on the
 * copy, which finds it up to date.
 */
let migratedTemplate: Promise<string> | undefined;
function templateDatabase(): Promise<string> {
  migratedTemplate ??= buildTemplate().catch((error: unknown) => {
    migratedTemplate = undefined;
    throw error;
  });
  return migratedTemplate;
}

async function buildTemplate(): Promise<string> {
  const name = `tpl_${createHash("sha256").update(JSON.stringify(MIGRATIONS)).digest("hex").slice(0, 16)}`;
  const client = await adminPool().connect();
  try {
    // Workers wait for the one that builds it.
    await client.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    try {
      const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (found.rowCount === 0) {
        const building = `${name}_${process.pid}`;
        await client.query(`CREATE DATABASE ${building} TEMPLATE template0 STRATEGY FILE_COPY`);
        const driver = await openPostgresDriver({ url: databaseUrl(building), maxConnections: 1 });
        try {
          await migrate(driver);
        } finally {
          await driver.close();
        }
        // Renamed only once complete: a half-built template is never copied.
        await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
  return name;
}

async function dropDatabase(name: string): Promise<void> {
  await adminPool().query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** The URL of a fresh, empty database on the run's PostgreSQL server (superuser, no password). Removed with the server at the end of the run. */
export async function testDatabaseUrl(): Promise<string> {
  return (await createDatabase()).url;
}

const leftoverDirs = new Set<string>();
process.on("exit", () => {
  for (const dir of leftoverDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh, empty, migrated store. SQLite: `laoding.db` in `options.dir` (kept) or in a new
 * temp folder (removed at close). PostgreSQL: a database created for this call, dropped at close.
 */
export async function openTestStore(engine: Engine, options: { clock?: Clock; dir?: string } = {}): Promise<Store> {
  const clock = options.clock ?? systemClock;
  if (engine === "sqlite") {
    const ownDir = options.dir === undefined ? mkdtempSync(join(tmpdir(), "laoding-store-")) : undefined;
    if (ownDir) leftoverDirs.add(ownDir);
    let store: Store;
    try {
      store = await openStore(join(options.dir ?? (ownDir as string), "laoding.db"), clock);
    } catch (error) {
      if (ownDir) removeDir(ownDir);
      throw error;
    }
    if (ownDir) afterClose(store, async () => removeDir(ownDir));
    return store;
  }
  const database = await createDatabase(await templateDatabase());
  let store: Store;
  try {
    store = await openStore(database.url, clock);
  } catch (error) {
    await dropDatabase(database.name).catch(() => undefined);
    throw error;
  }
  afterClose(store, () => dropDatabase(database.name));
  return store;
}

function removeDir(dir: string): void {
  leftoverDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Makes `store.close()` also run `cleanup`, once, after the store itself is closed. */
function afterClose(store: Store, cleanup: () => Promise<void>): void {
  const close = store.close.bind(store);
  let closing: Promise<void> | undefined;
  store.close = () => {
    closing ??= (async () => {
      try {
        await close();
      } finally {
        await cleanup();
      }
    })();
    return closing;
  };
}
