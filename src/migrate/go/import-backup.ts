/**
 * The backup `laoding import go --apply` writes before anything else, in
 * `<workspace>/data/import-backups/go-<time>/`: configs/ and skills/ as gzip'd tars (the
 * share backup's walk: links stored as links, never followed) and the database by
 * SQLite's online backup (a consistent copy while the bot may run).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import { writeTreeArchive } from "../../share/tree-archive.js";
import type { Store } from "../../store/store.js";

export type ImportBackup = { dir: string; files: string[] };

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
  const database = join(dir, "laoding.db");
  await store.db.backup(database);
  files.push(database);
  return { dir, files };
}
