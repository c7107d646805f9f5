/**
 * Where logs go while a person chats on the terminal: a file under the workspace, rotated
 * by size (laoding.log, laoding.log.1 ... .N), so the conversation stays readable and the
 * disk stays bounded. Writes are synchronous: a crash never loses the line that explains it.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

export const LOG_FILE_NAME = "laoding.log";

export type LogFileOptions = { dir: string; maxBytes: number; keep: number };

export type LogFile = {
  path: string;
  write(line: string): boolean;
  /** The open descriptor, handed to toolhost children as their stderr so their lines land here too. */
  fd(): number;
};

export function openLogFile(options: LogFileOptions): LogFile {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const path = join(options.dir, LOG_FILE_NAME);
  let fd = openSync(path, "a", 0o600);
  let size = fstatSync(fd).size;
  const rotate = () => {
    closeSync(fd);
    rmSync(`${path}.${options.keep}`, { force: true });
    for (let index = options.keep - 1; index >= 1; index -= 1) {
      if (existsSync(`${path}.${index}`)) renameSync(`${path}.${index}`, `${path}.${index + 1}`);
    }
    renameSync(path, `${path}.1`);
    fd = openSync(path, "a", 0o600);
    size = 0;
  };
  return {
    path,
    fd: () => fd,
    write(line) {
      if (size > 0 && size + Buffer.byteLength(line) > options.maxBytes) rotate();
      size += writeSync(fd, line);
      return true;
    },
  };
}

/** The log files of a folder, oldest first (rotated ones, then the current one). */
export function logFilesOldestFirst(dir: string, keep = 9): string[] {
  const path = join(dir, LOG_FILE_NAME);
  const rotated = Array.from({ length: keep }, (_, index) => `${path}.${keep - index}`);
  return [...rotated, path].filter((file) => existsSync(file));
}
