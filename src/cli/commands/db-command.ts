import { existsSync } from "node:fs";
import {
  checkTargetUrl,
  copyDatabase,
  countRows,
  DEFAULT_COPY_BATCH,
  describeTarget,
  type CopyProgress,
} from "../../store/copy-database.js";
import { isPostgresUrl } from "../../store/sql/database-url.js";
import { latestVersion, schemaVersion } from "../../store/sql/migrate.js";
import { openPostgresDriver, type PostgresDriver } from "../../store/sql/postgres-driver.js";
import type { Engine, SqlDriver } from "../../store/sql/sql-driver.js";
import { openSqliteDriver } from "../../store/sql/sqlite-driver.js";
import { STORE_TABLES } from "../../store/tables.js";
import { bootstrap } from "../bootstrap.js";
import { UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding db status [--json] [--workspace DIR]
       laoding db copy [--to postgres://USER@HOST:5432/DATABASE] [--resume] [--batch N] [--workspace DIR]

  db status   the store's engine (sqlite or postgres), where it is (the SQLite file, or
              host:port/database), its schema version and this code's, and the rows of
              every table; on PostgreSQL also the server version and a SELECT 1 round trip
  db copy     move this workspace's SQLite database (data/laoding.db) to PostgreSQL: a
              consistent snapshot, the target migrated first, table by table in batches
              with the same ids, then the row counts compared. Stop the bot first: rows
              written after the snapshot stay behind. Then set DATABASE_URL to the target

Options:
  --to URL          the PostgreSQL database to fill (default: DATABASE_URL when set); its
                    password in the URL (USER:PASSWORD@HOST) or in PGPASSWORD; TLS options
                    such as ?sslmode=require pass through
  --resume          continue into a target that already has rows (an interrupted copy):
                    rows already there are kept, missing ones added
  --batch N         rows per transaction (default ${DEFAULT_COPY_BATCH})
  --json            machine-readable output (status)
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

/** Progress lines per table at most this often (the last one of a table always). */
const PROGRESS_EVERY_MS = 1_000;

export const dbCommand: Command = {
  name: "db",
  summary: "the store's engine, schema version and row counts; copy a SQLite install to PostgreSQL",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      {
        to: { type: "string" },
        resume: { type: "boolean" },
        batch: { type: "string" },
        json: { type: "boolean" },
        ...WORKSPACE_FLAG.option,
      },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, ...extra] = positionals;
    if (action !== "status" && action !== "copy")
      throw new UsageError(
        action ? `unknown action "${action}" (status or copy)` : "an action is required: status or copy",
        usage,
      );
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`, usage);
    if (action === "status") {
      for (const flag of ["to", "resume", "batch"] as const)
        if (values[flag] !== undefined) throw new UsageError(`--${flag} is for db copy`, usage);
      return status(context, values.workspace, values.json === true);
    }
    if (values.json) throw new UsageError("--json is for db status", usage);
    const batch = values.batch === undefined ? DEFAULT_COPY_BATCH : Number(values.batch);
    if (!Number.isInteger(batch) || batch < 1 || batch > 50_000)
      throw new UsageError(`--batch must be a whole number from 1 to 50000, not "${values.batch}"`, usage);
    if (values.to !== undefined) {
      rememberPassword(values.to, context);
      try {
        checkTargetUrl(values.to);
      } catch (error) {
        throw new UsageError(`--to: ${(error as Error).message}`, usage);
      }
    }
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    const target = values.to ?? boot.loaded.config.DATABASE_URL;
    if (target === undefined) throw new UsageError("--to postgres://… is required (or set DATABASE_URL)", usage);
    return copy(context, boot.layout.databaseFile, target, values.resume === true, batch);
  },
};

type Status = {
  engine: Engine;
  where: string;
  exists: boolean;
  schemaVersion: number;
  latestVersion: number;
  tables: Record<string, number | null>;
  server?: { version: string; roundTripMs: number };
};

async function status(context: CliContext, workspaceDir: string | undefined, json: boolean): Promise<number> {
  const boot = bootstrap(context, { seed: false, workspaceDir, logRouting: { interactive: () => false } });
  const target = boot.layout.databaseTarget;
  const result = await readStatus(target);
  if (json) {
    writeLine(context.stdout, JSON.stringify(result, null, 2));
    return 0;
  }
  const out = (line: string) => writeLine(context.stdout, line);
  out(`engine  ${result.engine}`);
  out(`where   ${result.where}${result.exists ? "" : " (not created yet: `laoding start` creates it)"}`);
  const behind =
    result.schemaVersion < result.latestVersion
      ? result.exists
        ? "; the next start migrates it"
        : ""
      : result.schemaVersion > result.latestVersion
        ? "; newer than this code: upgrade LaodingBot"
        : "";
  out(`schema  version ${result.schemaVersion} (this code: ${result.latestVersion}${behind})`);
  if (result.server)
    out(`server  PostgreSQL ${result.server.version} · SELECT 1 round trip ${result.server.roundTripMs.toFixed(2)} ms`);
  out("rows");
  const width = Math.max(...STORE_TABLES.map((table) => table.length));
  let total = 0;
  for (const table of STORE_TABLES) {
    const count = result.tables[table] ?? null;
    total += count ?? 0;
    out(`  ${table.padEnd(width)}  ${count === null ? "-" : String(count)}`);
  }
  out(`  ${"total".padEnd(width)}  ${total}`);
  return 0;
}

/** Reads without changing anything: the SQLite file read-only, no migration on either engine. */
async function readStatus(target: string): Promise<Status> {
  const engine: Engine = isPostgresUrl(target) ? "postgres" : "sqlite";
  const base = { engine, where: describeTarget(target), latestVersion: latestVersion() };
  if (engine === "sqlite" && !existsSync(target)) {
    return {
      ...base,
      exists: false,
      schemaVersion: 0,
      tables: Object.fromEntries(STORE_TABLES.map((table) => [table, null])),
    };
  }
  const driver: SqlDriver =
    engine === "postgres"
      ? await openPostgresDriver({ url: target, maxConnections: 1, applicationName: "laoding db status" })
      : openSqliteDriver({ file: target, readonly: true });
  try {
    const result: Status = {
      ...base,
      exists: true,
      schemaVersion: await schemaVersion(driver),
      tables: await countRows(driver),
    };
    if (driver.engine === "postgres") result.server = await serverFacts(driver as PostgresDriver);
    return result;
  } finally {
    await driver.close();
  }
}

/** The server's version, and the median of five `SELECT 1` round trips on an open connection. */
async function serverFacts(driver: PostgresDriver): Promise<{ version: string; roundTripMs: number }> {
  const version = (await driver.get<{ server_version: string }>("SHOW server_version"))?.server_version ?? "unknown";
  const times: number[] = [];
  for (let index = 0; index < 5; index += 1) {
    const started = performance.now();
    await driver.get("SELECT 1");
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { version, roundTripMs: Math.round((times[2] as number) * 100) / 100 };
}

async function copy(
  context: CliContext,
  source: string,
  target: string,
  resume: boolean,
  batchSize: number,
): Promise<number> {
  // A line per table when it is done, and every second while a big one is being copied.
  const lastPrinted = new Map<string, number>();
  const onProgress = ({ table, copied, total }: CopyProgress) => {
    const now = performance.now();
    if (copied === 0 && total > 0) return void lastPrinted.set(table, now);
    if (copied < total && now - (lastPrinted.get(table) ?? now) < PROGRESS_EVERY_MS) return;
    lastPrinted.set(table, now);
    writeLine(context.stderr, `${table}: ${copied}/${total}`);
  };
  const result = await copyDatabase({ source, target, resume, batchSize, onProgress });
  const out = (line: string) => writeLine(context.stdout, line);
  const seconds = result.elapsedMs / 1000;
  const rate = seconds > 0 ? Math.round(result.rows / seconds) : result.rows;
  const news = resume ? ` (${result.inserted} new, ${result.rows - result.inserted} already there)` : "";
  out(
    `copied ${source} (schema version ${result.schemaVersion}) to ${result.target}: ${result.rows} rows${news} in ${seconds.toFixed(1)} s, ${rate} rows/s`,
  );
  const width = Math.max(...result.tables.map((table) => table.table.length));
  for (const table of result.tables)
    out(`  ${table.table.padEnd(width)}  ${table.rows}${resume ? ` (${table.inserted} new)` : ""}`);
  out("verified: every table has as many rows in PostgreSQL as in the SQLite snapshot");
  out("next: set DATABASE_URL in configs/env to this database and start the bot (docs/scale-out.md)");
  return 0;
}

/** A password given on the command line is a secret of this run: the last-resort error printer removes it. */
function rememberPassword(url: string, context: CliContext): void {
  try {
    const password = new URL(url).password;
    if (!password) return;
    context.secrets?.add(password);
    context.secrets?.add(decodeURIComponent(password));
  } catch {
    // Not a URL: checkTargetUrl says so, without echoing it.
  }
}
