/**
 * Opening and writing files the safe way once the path sandbox has resolved them:
 * open with O_NOFOLLOW and re-check the opened file's real path through /proc/self/fd
 * (a component swapped for a link between check and open is caught), and write through
 * a temp file + rename so a reader never sees half a file.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
  lstatSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathDescriptor, type PathSandbox } from "../sandbox/path-sandbox.js";
import { ToolError } from "../tool-error.js";

export type OpenedFile = { fd: number; stats: Stats };

/**
 * Resolves a path argument and opens it for reading in as few system calls as the checks
 * allow: an O_PATH descriptor follows the links, /proc/self/fd names the real file, the
 * roots are checked on that name, and the very inode checked is then opened for reading
 * through /proc/self/fd (nothing is looked up by path again, so nothing can be swapped in
 * between). Seven calls where realpath, open and a re-check took about twelve. A path that
 * cannot be opened so (missing, a loop, not enterable, no /proc) goes the long way, through
 * the sandbox's resolve, which says precisely what is wrong.
 */
export function openInsideForRead(sandbox: PathSandbox, input: string, cwd: string): OpenedFile {
  const theLongWay = () => openForRead(sandbox, sandbox.resolve(input, cwd, "read").realPath, input);
  const absolute = sandbox.absolute(input, cwd);
  let opened: { fd: number; realPath: string | undefined };
  try {
    opened = pathDescriptor(absolute);
  } catch {
    return theLongWay();
  }
  const { fd: pathFd, realPath } = opened;
  try {
    if (realPath === undefined) return theLongWay();
    sandbox.assertInside(realPath, input);
    let fd: number;
    try {
      fd = openSync(`/proc/self/fd/${pathFd}`, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      throw fsError(error, input);
    }
    return checkedRegularFile(fd, input);
  } finally {
    closeSync(pathFd);
  }
}

export function openForRead(sandbox: PathSandbox, realPath: string, input: string): OpenedFile {
  let fd: number;
  try {
    fd = openSync(realPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw fsError(error, input);
  }
  try {
    sandbox.assertInside(readlinkSync(`/proc/self/fd/${fd}`), input);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return checkedRegularFile(fd, input);
}

/** The opened file if it is a regular file; closed, with the reason, if not. */
function checkedRegularFile(fd: number, input: string): OpenedFile {
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw new ToolError("PATH_IS_DIRECTORY", `${input} is a directory; use file.list`);
    if (!stats.isFile()) throw new ToolError("INVALID_ARGS", `${input} is not a regular file (device, pipe or socket)`);
    return { fd, stats };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Writes atomically; refuses to replace a link or a directory. Returns whether the file was
 * new. The mode is kept from the file it replaces unless one is given.
 */
export function atomicWrite(realPath: string, content: string | Buffer, input: string, mode?: number): boolean {
  const existing = lstatOrUndefined(realPath);
  if (existing?.isSymbolicLink())
    throw new ToolError("PATH_NOT_ALLOWED", `${input} is a link; file tools never write through links`);
  if (existing?.isDirectory()) throw new ToolError("PATH_IS_DIRECTORY", `${input} is a directory`);
  if (existing && !existing.isFile()) throw new ToolError("INVALID_ARGS", `${input} is not a regular file`);
  const folder = dirname(realPath);
  createFolders(folder, input);
  const temp = join(folder, `.${basename(realPath)}.tmp-${randomBytes(6).toString("hex")}`);
  try {
    const wanted = mode ?? (existing ? existing.mode & 0o777 : 0o644);
    writeFileSync(temp, content, { flag: "wx", mode: wanted });
    // The umask trims the mode given at creation: set it exactly (an executable script stays one).
    if (mode !== undefined) chmodSync(temp, mode);
    renameSync(temp, realPath);
  } catch (error) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The folder was swapped away under us: the temp file is not where we can reach it.
    }
    throw fsError(error, input);
  }
  return existing === undefined;
}

function createFolders(folder: string, input: string): void {
  const missing: string[] = [];
  for (let current = folder; lstatOrUndefined(current) === undefined; current = dirname(current))
    missing.unshift(current);
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw fsError(error, input);
    }
  }
  const stats = lstatOrUndefined(folder);
  if (!stats?.isDirectory()) throw new ToolError("NOT_A_DIRECTORY", `the parent of ${input} is not a directory`);
}

export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Maps fs errors to tool error codes. The reason names the model's own argument and the
 * error code, never the fs message: that holds the real path, which may lie outside the
 * agent's trees (a link's target, a swapped folder).
 */
export function fsError(error: unknown, input: string): ToolError {
  if (error instanceof ToolError) return error;
  return errnoFailure(error, input) ?? new ToolError("INTERNAL", `${input}: the file system refused the operation`);
}

/** A ToolError for an error carrying an errno code, or undefined for anything else. */
export function errnoFailure(error: unknown, input: string): ToolError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== "string" || !code.startsWith("E")) return undefined;
  switch (code) {
    case "ENOENT":
      return new ToolError("PATH_NOT_FOUND", `${input} does not exist`);
    case "EISDIR":
      return new ToolError("PATH_IS_DIRECTORY", `${input} is a directory`);
    case "ENOTDIR":
      return new ToolError("NOT_A_DIRECTORY", `a component of ${input} is not a directory`);
    case "ELOOP":
      return new ToolError("PATH_NOT_ALLOWED", `${input} is a link; file tools never follow a final link`);
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ToolError("PATH_NOT_ALLOWED", `${input}: ${code}`);
    case "ENAMETOOLONG":
      return new ToolError("INVALID_ARGS", `${input}: a name in the path is too long (ENAMETOOLONG)`);
    case "EINVAL":
    case "EILSEQ":
    case "E2BIG":
    case "ERANGE":
      return new ToolError("INVALID_ARGS", `${input}: invalid argument for the file system (${code})`);
    case "EEXIST":
    case "ENOTEMPTY":
    case "EBUSY":
    case "EXDEV":
    case "ETXTBSY":
      return new ToolError("INVALID_ARGS", `${input}: the operation is not possible here (${code})`);
    case "ENOSPC":
    case "EDQUOT":
    case "EFBIG":
      return new ToolError("FILE_TOO_LARGE", `${input}: no space left for it (${code})`);
    default:
      return new ToolError("INTERNAL", `${input}: the file system refused the operation (${code})`);
  }
}
