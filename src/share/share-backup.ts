/**
 * The backup `laoding share apply` writes before it copies anything: the whole share
 * folder as a gzip'd tar in `<workspace>/data/share-backups/` (outside the share, in the
 * bot's private data folder), named by time. Links are stored as links and never
 * followed, not even one an agent swaps in while the backup runs (tree-archive.ts walks
 * by descriptor); modes, owners and times are kept, so extracting it gives the share back
 * as it was.
 *
 * Why the `tar` package (node-tar, npm's own): it writes and reads the real tar format
 * (pax headers for long names, modes, links) that any `tar -xzf` restores from, without
 * shelling out to a system tar whose flags differ between GNU and BSD.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { extract } from "tar";
import { writeTreeArchive } from "./tree-archive.js";

export async function writeShareBackup(shareDir: string, backupsDir: string, now: Date): Promise<string> {
  mkdirSync(backupsDir, { recursive: true, mode: 0o700 });
  const file = join(backupsDir, `share-${now.toISOString().replace(/[:.]/g, "-")}.tar.gz`);
  // The archive holds `<share name>/...`; a failure leaves none, and apply copies nothing.
  await writeTreeArchive(shareDir, file);
  return file;
}

/** Extracts a backup into `targetParent` (the share comes back as `<targetParent>/<share name>`). */
export async function restoreShareBackup(file: string, targetParent: string): Promise<void> {
  mkdirSync(targetParent, { recursive: true });
  await extract({ file, cwd: targetParent, preserveOwner: true });
}
