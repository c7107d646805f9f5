/**
 * The SQLite store's integrity (`PRAGMA quick_check`) and schema version, read-only: the
 * file is opened with `readonly` and `fileMustExist`, so the doctor neither creates nor
 * migrates it, and a running bot may keep writing meanwhile (WAL).
 */
import Database from "better-sqlite3";
import { MIGRATIONS } from "../store/migrations.js";
import { failed, passed, type CheckResult } from "./check-result.js";

/** At most this many of quick_check's complaints are shown: the first few say enough. */
const SHOWN_PROBLEMS = 3;

export function checkDatabase(file: string, exists: (path: string) => boolean, latestVersion = Math.max(...MIGRATIONS.map((migration) => migration.version))): CheckResult {
  const title = `database ${file}`;
  if (!exists(file)) return passed("database", `${title} (not created yet: \`laoding start\` creates it)`);
  const recover = `Stop the bot, keep the file (cp ${file} ${file}.broken), then recover what can be read (sqlite3 ${file}.broken .recover | sqlite3 ${file}.recovered, and move that into place), or move the file aside to start with an empty database`;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma("quick_check") as { quick_check: string }[];
    const problems = rows.map((row) => row.quick_check).filter((text) => text !== "ok");
    if (problems.length > 0) return failed("database", title, `PRAGMA quick_check found ${problems.length} problem(s): ${problems.slice(0, SHOWN_PROBLEMS).join("; ")}`, recover);
    const version = db.pragma("user_version", { simple: true }) as number;
    if (version > latestVersion) {
      return failed("database", title, `schema version ${version} is newer than this code knows (${latestVersion})`, "Upgrade LaodingBot to the version that wrote it (git pull && npm ci && npm run build), or restore a backup made for this version");
    }
    return passed("database", `${title} (quick_check ok, schema version ${version}${version < latestVersion ? `; \`laoding start\` migrates it to ${latestVersion}` : ""})`);
  } catch (error) {
    return failed("database", title, `cannot be read: ${(error as Error).message}`, recover);
  } finally {
    db?.close();
  }
}
