/**
 * The path sandbox, enforced in every sandbox mode. Invariants:
 * - a path is inside a root only when, after realpath of every existing segment, its
 *   segments start with the root's segments (never a string-prefix test: `/a/agent1`
 *   does not admit `/a/agent10` or `/a/agent1_evil`);
 * - a link anywhere on the way is followed and the result re-checked; a dangling link
 *   is refused (it could be re-pointed later, CVE-2025-53109 class);
 * - the real parent of a file to be created is checked;
 * - NUL bytes are refused before any fs call;
 * - relative paths resolve against the session's working folder only.
 *
 * realpath is an O_PATH descriptor named through /proc/self/fd (realPathOf): Node's
 * JavaScript realpath makes an lstat per path segment and glibc's a readlink per segment,
 * which was the largest cost of a fast tool call in the child.
 */
import { closeSync, lstatSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { ToolError } from "../tool-error.js";

export type SandboxRoot = { path: string; writable: boolean; label: string };
export type Access = "read" | "write";

export type ResolvedPath = {
  /** The real path (for a missing file: the real parent joined with the missing tail). */
  realPath: string;
  exists: boolean;
  root: SandboxRoot;
};

export class PathSandbox {
  readonly roots: SandboxRoot[];
  /** The roots, longest path first: the first that contains a path is the most specific. */
  private readonly mostSpecificFirst: SandboxRoot[];

  constructor(roots: SandboxRoot[]) {
    // Roots are compared in their real form; a root that does not exist yet cannot hold anything.
    this.roots = roots.flatMap((root) => {
      try {
        return [{ ...root, path: realpathSync.native(root.path) }];
      } catch {
        return [];
      }
    });
    this.mostSpecificFirst = [...this.roots].sort((a, b) => b.path.length - a.path.length);
  }

  /** The root that contains a real path, by path segments. */
  rootOf(realPath: string): SandboxRoot | undefined {
    // The most specific root wins: a read-only tree inside a writable one stays read-only.
    return this.mostSpecificFirst.find((root) => isWithin(root.path, realPath));
  }

  /**
   * Resolves a tool's path argument. `cwd` must itself be a real path inside a root.
   * Throws ToolError PATH_NOT_ALLOWED for anything outside the roots.
   */
  resolve(input: string, cwd: string, access: Access): ResolvedPath {
    const { realPath, exists } = realize(this.absolute(input, cwd), input);
    const root = this.rootOf(realPath);
    if (!root) throw outside(input);
    if (access === "write" && !root.writable)
      throw new ToolError("PATH_NOT_ALLOWED", `${input} is in a read-only folder (${root.label})`);
    return { realPath, exists, root };
  }

  /** The absolute path a tool's path argument names ("." and ".." by name), refusing NUL bytes and empty paths. */
  absolute(input: string, cwd: string): string {
    if (input.includes("\0")) throw new ToolError("PATH_NOT_ALLOWED", "path contains a NUL byte");
    if (input.trim() === "") throw new ToolError("INVALID_ARGS", "path is empty");
    return isAbsolute(input) ? resolve(input) : resolve(cwd, input);
  }

  /** Re-check of an already opened file's real path (from /proc/self/fd), against swaps. */
  assertInside(realPath: string, input: string): void {
    if (!this.rootOf(realPath)) throw new ToolError("PATH_NOT_ALLOWED", `${input} is outside this agent's folders`);
  }
}

/** A "." or ".." segment, an empty one, or a trailing separator: the string is not yet its segments. */
const NOT_NORMAL = /\/\.{1,2}(\/|$)|\/\/|.\/$/;

/** True when `path` equals `root` or lies below it, compared segment by segment. */
export function isWithin(root: string, path: string): boolean {
  if (!isAbsolute(root) || !isAbsolute(path) || NOT_NORMAL.test(root) || NOT_NORMAL.test(path)) {
    const rel = relative(root, path);
    return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
  }
  // Normal absolute paths (real paths are): root's segments, then the end or a separator.
  // `/a/agent1` never admits `/a/agent10`. Cheaper than path.relative on every call.
  if (!path.startsWith(root)) return false;
  return path.length === root.length || root === sep || path[root.length] === sep;
}

/**
 * realpath of the longest existing prefix plus the missing tail. A dangling link on the
 * way is refused: writing through it would create a file wherever it points.
 */
function realize(absolute: string, input: string): { realPath: string; exists: boolean } {
  try {
    return { realPath: realPathOf(absolute), exists: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new ToolError("PATH_NOT_ALLOWED", `${input} goes through a loop of links`);
    // The agent's uid may not enter it: whatever it is, it is not the agent's.
    if (code === "EACCES" || code === "EPERM") throw outside(input);
    // A link swapped for a folder between lstat and readlink: the agent is racing its own tools.
    if (code === "EINVAL")
      throw new ToolError("PATH_NOT_ALLOWED", `${input} changed while it was being checked; try again`);
    if (code === "ENAMETOOLONG") throw new ToolError("INVALID_ARGS", `${input.slice(0, 80)}… is too long a path`);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const segments = absolute.split(sep).filter((segment) => segment.length > 0);
  let existing: string = sep;
  let index = 0;
  for (; index < segments.length; index += 1) {
    const next = join(existing, segments[index] as string);
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      break;
    }
    if (isLink) {
      try {
        realpathSync.native(next);
      } catch {
        // Never say where it points: the target may describe another agent's tree.
        throw new ToolError("PATH_NOT_ALLOWED", `${input} goes through a dangling link`);
      }
    }
    existing = next;
  }
  let realParent: string;
  try {
    realParent = realpathSync.native(existing);
  } catch {
    throw outside(input);
  }
  return { realPath: join(realParent, ...segments.slice(index)), exists: false };
}

/** Linux's O_PATH: a descriptor that names a file without opening it (no device is opened, no FIFO waited on). */
const O_PATH = 0o10000000;

/**
 * An O_PATH descriptor of `absolute` (every link followed; realpath's error codes when it
 * cannot be had) and the real path /proc/self/fd names for it, or undefined when /proc
 * cannot say (no /proc, a file deleted meanwhile). The caller closes `fd`.
 */
export function pathDescriptor(absolute: string): { fd: number; realPath: string | undefined } {
  const fd = openSync(absolute, O_PATH);
  try {
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    return { fd, realPath: real.startsWith(sep) && !real.endsWith(" (deleted)") ? real : undefined };
  } catch {
    return { fd, realPath: undefined };
  }
}

/** realpath in three system calls (glibc's makes a readlink per segment); without /proc, realpath. */
function realPathOf(absolute: string): string {
  const { fd, realPath } = pathDescriptor(absolute);
  closeSync(fd);
  return realPath ?? realpathSync.native(absolute);
}

function outside(input: string): ToolError {
  return new ToolError("PATH_NOT_ALLOWED", `${input} is outside this agent's folders`);
}
