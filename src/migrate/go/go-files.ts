/**
 * Reading the Go install's files as the operator: the folder the operator named is not an
 * agent's tree, but the Go bot's agents wrote into it, so links are never followed (a
 * link is reported and skipped; copy its target by hand) and a file is opened without
 * following a final link.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type GoFileEntry =
  | { relativePath: string; path: string; sizeBytes: number; mode: number }
  | { relativePath: string; path: string; refused: string };

/** Every regular file below `root` (sorted), links and special files reported as refused. */
export function walkGoFolder(root: string, maxDepth = 32): GoFileEntry[] {
  const entries: GoFileEntry[] = [];
  const walk = (dir: string, prefix: string, depth: number) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const relativePath = prefix ? `${prefix}/${name}` : name;
      const stats = lstatSync(path);
      if (stats.isSymbolicLink())
        entries.push({ relativePath, path, refused: "a link (never followed): copy what it points to by hand" });
      else if (stats.isDirectory()) {
        if (depth >= maxDepth) entries.push({ relativePath, path, refused: `deeper than ${maxDepth} folders` });
        else walk(path, relativePath, depth + 1);
      } else if (stats.isFile()) entries.push({ relativePath, path, sizeBytes: stats.size, mode: stats.mode & 0o777 });
      else entries.push({ relativePath, path, refused: "not a regular file" });
    }
  };
  walk(root, "", 0);
  return entries;
}

/** A regular file's bytes, refused when the final name is a link. */
export function readGoFile(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function sha256(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
