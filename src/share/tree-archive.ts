/**
 * A gzip'd tar of one folder, written by a walk that never follows a link. The share
 * backup runs as root over agents' trees, which agents write while it runs: node-tar's
 * own walk looks at a path and then opens or lists it by the same path, so a file or
 * folder swapped for a link in between would be read through the link (a root-only file
 * stored under the agent's name, and given back to the agent by a restore). Here every
 * entry is pinned by descriptor (src/workspace/descriptor-walk.ts) and read from that
 * descriptor; node-tar only encodes the headers, so the format stays the one `tar -xzf`
 * and `restoreShareBackup` read.
 *
 * Links are stored as links (their text, never their target's content); regular files,
 * folders and FIFOs as they are; sockets and devices are left out (tar cannot restore a
 * socket, and opening a device as root has side effects).
 */
import { once } from "node:events";
import { closeSync, createWriteStream, fstatSync, openSync, readSync, rmSync, type Stats } from "node:fs";
import { basename } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip, type Gzip } from "node:zlib";
import { Header, Pax } from "tar";
import { MAX_TREE_DEPTH } from "../toolhost/sandbox/agent-trees.js";
import { listNames, openFile, pinEntry, pinPath, readLinkText, type Pinned } from "../workspace/descriptor-walk.js";

const BLOCK_BYTES = 512;
const CHUNK_BYTES = 64 * 1024;

export class TreeArchiveError extends Error {
  override readonly name = "TreeArchiveError";
}

/** Writes `<folder name>/...` into a new `file` (never an existing one), mode 0600; on failure no file is left. */
export async function writeTreeArchive(folder: string, file: string): Promise<void> {
  // The folder itself is the operator's path (the share): it is followed, what is below is not.
  const root = pinPath(folder, true);
  if (root === undefined || !root.stats.isDirectory()) {
    if (root) closeSync(root.fd);
    throw new TreeArchiveError(`${folder} is not a folder; nothing to back up`);
  }
  let out: number;
  try {
    out = openSync(file, "wx", 0o600);
  } catch (error) {
    closeSync(root.fd);
    throw error;
  }
  const gzip = createGzip();
  const written = pipeline(gzip, createWriteStream("", { fd: out }));
  try {
    await addFolder(gzip, root, basename(folder), 0);
    await put(gzip, Buffer.alloc(2 * BLOCK_BYTES));
    gzip.end();
    await written;
  } catch (error) {
    gzip.destroy(error as Error);
    await written.catch(() => undefined);
    // A partial archive is no backup; the file is ours (made by this call).
    rmSync(file, { force: true });
    throw error;
  } finally {
    closeSync(root.fd);
  }
}

async function addFolder(gzip: Gzip, folder: Pinned, path: string, depth: number): Promise<void> {
  await putHeader(gzip, folder.stats, { path: `${path}/`, type: "Directory", size: 0 });
  if (depth >= MAX_TREE_DEPTH)
    throw new TreeArchiveError(`${path} is nested deeper than ${MAX_TREE_DEPTH} levels; the backup stops there`);
  for (const name of listNames(folder.fd)) {
    const entry = pinEntry(folder.fd, name);
    // Gone since the listing: nothing to store.
    if (entry === undefined) continue;
    try {
      await addEntry(gzip, folder.fd, name, entry, `${path}/${name}`, depth + 1);
    } finally {
      closeSync(entry.fd);
    }
  }
}

async function addEntry(
  gzip: Gzip,
  dirFd: number,
  name: string,
  entry: Pinned,
  path: string,
  depth: number,
): Promise<void> {
  const { stats } = entry;
  if (stats.isDirectory()) return addFolder(gzip, entry, path, depth);
  if (stats.isSymbolicLink()) {
    const linkpath = readLinkText(dirFd, name);
    // Swapped for something else since it was pinned: the link is gone, so is its entry.
    if (linkpath !== undefined) await putHeader(gzip, stats, { path, type: "SymbolicLink", size: 0, linkpath });
    return;
  }
  if (stats.isFIFO()) return putHeader(gzip, stats, { path, type: "FIFO", size: 0 });
  if (stats.isFile()) return addFile(gzip, entry, path);
}

async function addFile(gzip: Gzip, entry: Pinned, path: string): Promise<void> {
  const fd = openFile(entry);
  try {
    // The size as the file is now (the header's size), read from the pinned inode.
    const stats = fstatSync(fd);
    await putHeader(gzip, stats, { path, type: "File", size: stats.size });
    let offset = 0;
    while (offset < stats.size) {
      const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, stats.size - offset));
      // A file that shrank while it was read is padded with zeros: the header is written.
      readSync(fd, chunk, 0, chunk.length, offset);
      await put(gzip, chunk);
      offset += chunk.length;
    }
    const padding = (BLOCK_BYTES - (stats.size % BLOCK_BYTES)) % BLOCK_BYTES;
    if (padding > 0) await put(gzip, Buffer.alloc(padding));
  } finally {
    closeSync(fd);
  }
}

type EntryFields = {
  path: string;
  type: "File" | "Directory" | "SymbolicLink" | "FIFO";
  size: number;
  linkpath?: string;
};

/** The header node-tar's own walk writes (owners, modes, times), with a pax header when the fields need one. */
async function putHeader(gzip: Gzip, stats: Stats, fields: EntryFields): Promise<void> {
  const mode = modeOf(stats.mode, fields.type === "Directory");
  const header = new Header({
    ...fields,
    mode,
    uid: stats.uid,
    gid: stats.gid,
    mtime: stats.mtime,
    atime: stats.atime,
    ctime: stats.ctime,
  });
  if (header.encode()) {
    const pax = new Pax({
      path: fields.path,
      linkpath: fields.linkpath,
      size: fields.size,
      uid: stats.uid,
      gid: stats.gid,
      mtime: stats.mtime,
      atime: stats.atime,
      ctime: stats.ctime,
    });
    await put(gzip, pax.encode());
  }
  if (!header.block) throw new TreeArchiveError(`cannot encode the tar header of ${fields.path}`);
  await put(gzip, header.block);
}

/** node-tar's modeFix: permission bits only, and a readable folder is also listable. */
function modeOf(mode: number, isFolder: boolean): number {
  let bits = mode & 0o7777;
  if (isFolder) {
    if (bits & 0o400) bits |= 0o100;
    if (bits & 0o40) bits |= 0o10;
    if (bits & 0o4) bits |= 0o1;
  }
  return bits;
}

async function put(gzip: Gzip, bytes: Buffer): Promise<void> {
  if (!gzip.write(bytes)) await once(gzip, "drain");
}
