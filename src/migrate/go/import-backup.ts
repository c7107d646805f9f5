/**
 * The backup `laoding import go --apply` writes before anything else, in
 * `<workspace>/data/import-backups/go-<time>/`: configs/ and skills/ as gzip'd tars (the
 * share backup's walk: links stored as links, never followed) and the database by
 * SQLite's online backup (a consistent copy while the bot may run). A PostgreSQL database
 * (DATABASE_URL) is not copied: the operator takes that backup with pg_dump before.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import { writeTreeArchive } from "../../share/tree-archive.js";
import type { SqliteDriver } from "../../store/sql/sqlite-driver.js";
import type { Store } from "../../store/store.js";

/** `databaseNotCopied`: why the database is not among the files (PostgreSQL), said to the operator. */
export type ImportBackup = { dir: string; files: string[]; databaseNotCopied?: string };

export async function writeImportBackup(layout: RuntimeLayout, store: Store, now: Date): Promise<ImportBackup> {
  const dir = join(layout.dataDir, "import-backups", `go-${now.toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  for (const [folder, name] of [
    [layout.configsDir, "configs.tar.gz"],
    [layout.baseSkillsDir, "skills.tar.gz"],
  ] as const) {
    if (!existsSync(folder)) continue;
    await writeTreeArchive(folder, join(dir, name));
    files.push(join(dir, name));
  }
  if (store.engine !== "sqlite") {
    return { dir, files, databaseNotCopied: postgresBackupAdvice(store.sql.label) };
  }
  const database = join(dir, "laoding.db");
  await (store.sql as SqliteDriver).database.backup(database);
  files.push(database);
  return { dir, files };
}

/** What the operator reads when the store is PostgreSQL: no automatic copy, pg_dump it first. */
export function postgresBackupAdvice(label: string): string {
  return `the PostgreSQL database ${label} is not backed up automatically (only the SQLite file is); take a backup with pg_dump before --apply (pg_dump --format=custom --file=laoding-before-import.dump "$DATABASE_URL")`;
}
