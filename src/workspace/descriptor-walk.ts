/**
 * Reaching what lies below a folder by descriptor, never by following a link. Code that
 * runs as root over folders an agent writes (the agent-tree walk, `laoding share`, its
 * backup) must not read or change a host file through a link the agent planted, nor
 * through a folder the agent swaps for a link between a check and the act.
 *
 * How: a folder is held by a descriptor and its entries are reached through
 * /proc/self/fd/<fd>/<name>, so only that last name is looked up. An entry is pinned with
 * O_PATH|O_NOFOLLOW, which opens a link as the link itself and opens nothing else (no
 * device or FIFO side effects); its type is read from that descriptor, and a file is
 * read by reopening the pinned descriptor, so a swap after the look cannot redirect the
 * read. Linux only, as is the sandbox.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  readdirSync,
  readlinkSync,
  type Stats,
} from "node:fs";

/** Linux's O_PATH (the same value on x86-64 and arm64); Node does not export it. */
export const O_PATH = 0o10000000;
/** A folder opened for listing, never through a link in its last name. */
export const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a name that became a FIFO between a look and the open must not hang root.
export const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const PIN_FLAGS = O_PATH | constants.O_NOFOLLOW;

/** The path that reaches `name` inside the folder held by `dirFd`, looking up only `name`. */
export function fdEntry(dirFd: number, name: string): string {
  return `/proc/self/fd/${dirFd}/${name}`;
}

/** An entry held by an O_PATH descriptor, with the type and mode it has. Close `fd` when done. */
export type Pinned = { fd: number; stats: Stats };

/** Pins `name` inside the held folder without following it; undefined when it is not there. */
export function pinEntry(dirFd: number, name: string): Pinned | undefined {
  return pinPath(fdEntry(dirFd, name), false);
}

/**
 * Pins a path given by the operator (a configured folder). Its earlier names are the
 * operator's layout and are followed; the last is followed only when `followLast`.
 */
export function pinPath(path: string, followLast: boolean): Pinned | undefined {
  let fd: number;
  try {
    // A trailing slash makes the kernel follow a final link even with O_NOFOLLOW.
    fd = followLast ? openSync(path, O_PATH) : openSync(path.length > 1 ? path.replace(/\/+$/, "") : path, PIN_FLAGS);
  } catch (error) {
    if (["ENOENT", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  }
  try {
    return { fd, stats: fstatSync(fd) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Why a relative path could not be walked: `at` is the part of it that is the problem. */
export type WalkRefusal = { problem: "link" | "missing" | "not a folder"; at: string };

/**
 * Pins the folder reached by `segments` from the held folder `rootFd` (the root itself
 * for none), one name at a time: each must be a real folder; a link is refused, never
 * followed. Returns a new descriptor the caller closes.
 */
export function pinFolder(rootFd: number, segments: string[]): number | WalkRefusal {
  let dirFd = openSync(`/proc/self/fd/${rootFd}`, O_PATH);
  for (const [index, name] of segments.entries()) {
    let pinned: Pinned | undefined;
    try {
      pinned = pinEntry(dirFd, name);
    } finally {
      closeSync(dirFd);
    }
    const at = segments.slice(0, index + 1).join("/");
    if (pinned === undefined) return { problem: "missing", at };
    if (!pinned.stats.isDirectory()) {
      closeSync(pinned.fd);
      return { problem: pinned.stats.isSymbolicLink() ? "link" : "not a folder", at };
    }
    dirFd = pinned.fd;
  }
  return dirFd;
}

export function isRefusal<T>(found: T | WalkRefusal): found is WalkRefusal {
  return typeof found === "object" && found !== null && "problem" in found;
}

/** The names in a held folder, sorted (so walks and archives are deterministic). */
export function listNames(dirFd: number): string[] {
  return readdirSync(`/proc/self/fd/${dirFd}`).sort();
}

/** A file that cannot be read as the regular file it was pinned as. */
export class PinnedReadError extends Error {
  override readonly name = "PinnedReadError";
}

/**
 * Reads the regular file pinned as `name` inside the held folder `dirFd`. The pinned
 * descriptor is reopened (the same inode, whatever the name points at by now), and the
 * opened file must still be a regular file lying directly inside that folder, compared
 * segment by segment from /proc/self/fd (never a string prefix).
 */
export function readPinnedFile(
  dirFd: number,
  name: string,
  pinned: Pinned,
  maxBytes = Number.POSITIVE_INFINITY,
): Buffer {
  const fd = openFile(pinned);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.ino !== pinned.stats.ino || stats.dev !== pinned.stats.dev)
      throw new PinnedReadError("is not the regular file it was a moment ago");
    if (!liesInside(dirFd, fd, name)) throw new PinnedReadError("was moved out of its folder while it was read");
    if (stats.size > maxBytes) throw new PinnedReadError(`is ${stats.size} bytes, over the ${maxBytes}-byte limit`);
    return readExactly(fd, stats.size);
  } finally {
    closeSync(fd);
  }
}

/** Opens the pinned regular file for reading (the inode already pinned, never a new lookup). */
export function openFile(pinned: Pinned): number {
  if (!pinned.stats.isFile()) throw new PinnedReadError("is not a regular file");
  // The /proc magic link leads to the pinned inode itself; O_NOFOLLOW would refuse the
  // magic link, and there is no name left to follow.
  return openSync(`/proc/self/fd/${pinned.fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
}

/**
 * Reads `size` bytes from the start: what a file grown since its fstat has more is left
 * out, and a file that shrank is padded with zeros (a tar entry's size is fixed by then).
 */
export function readExactly(fd: number, size: number): Buffer {
  const bytes = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    const read = readSync(fd, bytes, offset, size - offset, offset);
    if (read === 0) break;
    offset += read;
  }
  return bytes;
}

function liesInside(dirFd: number, fileFd: number, name: string): boolean {
  const folder = segmentsOf(readlinkSync(`/proc/self/fd/${dirFd}`));
  const file = segmentsOf(readlinkSync(`/proc/self/fd/${fileFd}`));
  return (
    file.length === folder.length + 1 &&
    folder.every((segment, index) => file[index] === segment) &&
    file[folder.length] === name
  );
}

function segmentsOf(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "");
}

/** A link's text, read through its folder's descriptor; undefined when the name is no longer a link. */
export function readLinkText(dirFd: number, name: string): string | undefined {
  try {
    return readlinkSync(fdEntry(dirFd, name));
  } catch {
    return undefined;
  }
}

export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export function openOrUndefined(path: string, flags: number): number | undefined {
  try {
    return openSync(path, flags);
  } catch {
    // Gone or swapped for a link since it was looked at: nothing of ours to act on.
    return undefined;
  }
}
