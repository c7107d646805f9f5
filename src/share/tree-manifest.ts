/**
 * What a tree holds, entry by entry (relative path -> type, permission bits, size, sha256
 * of a file's bytes, a link's text), so a restored share can be compared with its archive
 * and the share as it is now with the one a rollback would bring back. The walk is the
 * backup's (tree-archive.ts): by descriptor from the root, never following a link, a file
 * hashed from its pinned inode; sockets and devices are listed as "other" (the backup
 * leaves them out, so they show as differences).
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { createHash } from "node:crypto";
import { MAX_TREE_DEPTH } from "../toolhost/sandbox/agent-trees.js";
import { listNames, openFile, pinEntry, pinPath, readLinkText, type Pinned } from "../workspace/descriptor-walk.js";

export type ManifestEntry = {
  type: "file" | "folder" | "link" | "fifo" | "other";
  mode: number;
  size: number;
  sha256?: string;
  linkpath?: string;
};
/** Keyed by the path relative to the tree's root ("" is the root itself), `/`-separated. */
export type TreeManifest = Map<string, ManifestEntry>;

const CHUNK_BYTES = 64 * 1024;

export class TreeManifestError extends Error {
  override readonly name = "TreeManifestError";
}

/** The manifest of `root`, or undefined when there is nothing there. The root itself is the operator's path and is followed. */
export function readTreeManifest(root: string): TreeManifest | undefined {
  const pinned = pinPath(root, true);
  if (pinned === undefined) return undefined;
  const manifest: TreeManifest = new Map();
  try {
    if (!pinned.stats.isDirectory()) throw new TreeManifestError(`${root} is not a folder`);
    addEntry(manifest, -1, "", pinned, "", 0);
  } finally {
    closeSync(pinned.fd);
  }
  return manifest;
}

function addEntry(
  manifest: TreeManifest,
  dirFd: number,
  name: string,
  entry: Pinned,
  path: string,
  depth: number,
): void {
  const { stats } = entry;
  if (stats.isDirectory()) {
    manifest.set(path, { type: "folder", mode: stats.mode & 0o7777, size: 0 });
    if (depth >= MAX_TREE_DEPTH) throw new TreeManifestError(`${path} is nested deeper than ${MAX_TREE_DEPTH} levels`);
    for (const child of listNames(entry.fd)) {
      const pinned = pinEntry(entry.fd, child);
      if (pinned === undefined) continue;
      try {
        addEntry(manifest, entry.fd, child, pinned, path === "" ? child : `${path}/${child}`, depth + 1);
      } finally {
        closeSync(pinned.fd);
      }
    }
  } else if (stats.isSymbolicLink()) {
    const linkpath = readLinkText(dirFd, name);
    if (linkpath !== undefined) manifest.set(path, { type: "link", mode: 0, size: 0, linkpath });
  } else if (stats.isFile()) {
    manifest.set(path, { type: "file", mode: stats.mode & 0o7777, ...hashPinned(entry) });
  } else {
    manifest.set(path, { type: stats.isFIFO() ? "fifo" : "other", mode: stats.mode & 0o7777, size: 0 });
  }
}

function hashPinned(entry: Pinned): { size: number; sha256: string } {
  const fd = openFile(entry);
  try {
    const { size } = fstatSync(fd);
    const hash = createHash("sha256");
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let offset = 0;
    while (offset < size) {
      const read = readSync(fd, chunk, 0, Math.min(CHUNK_BYTES, size - offset), offset);
      if (read === 0) break;
      hash.update(chunk.subarray(0, read));
      offset += read;
    }
    return { size: offset, sha256: hash.digest("hex") };
  } finally {
    closeSync(fd);
  }
}

export type ManifestDifference = { path: string; change: "only in the archive" | "only now" | "differs" };

/** Entries that differ between `archive` and `now`, sorted by path. */
export function compareManifests(archive: TreeManifest, now: TreeManifest): ManifestDifference[] {
  const differences: ManifestDifference[] = [];
  for (const [path, entry] of archive) {
    const current = now.get(path);
    if (current === undefined) differences.push({ path, change: "only in the archive" });
    else if (!sameEntry(entry, current)) differences.push({ path, change: "differs" });
  }
  for (const path of now.keys()) if (!archive.has(path)) differences.push({ path, change: "only now" });
  return differences.sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
}

function sameEntry(left: ManifestEntry, right: ManifestEntry): boolean {
  return (
    left.type === right.type &&
    left.mode === right.mode &&
    left.size === right.size &&
    left.sha256 === right.sha256 &&
    left.linkpath === right.linkpath
  );
}
