/**
 * Prepares a session working folder whenever the child resolves it afresh (at most once a
 * second per chat for path tools, on every shell command; toolhost-server.ts), with the
 * agent's authority: the `团队经验` link is created, put back when it was removed (with
 * its folder, say), re-pointed when it points elsewhere, or removed when the library is
 * switched off; a folder that is a git checkout gets the link's name in
 * `.git/info/exclude` once; and the library's index is brought up to date (once per
 * folder per child: the child is relaunched when the switch flips).
 * Only a link is ever removed or replaced: a real file or folder of that name is left alone.
 */
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { ensureFresh, type LibraryLocale } from "../../knowledge/library/library-index.js";

export type SessionSetupOptions = {
  link?: { name: string; target?: string | undefined } | undefined;
  library?: { dir: string; locale: LibraryLocale } | undefined;
  logger: Logger;
};

/** Errors the agent's own folder may legitimately produce (made by another user, read-only): no link, no crash. */
const TOLERATED = new Set(["EEXIST", "EACCES", "EPERM", "EROFS", "ENOENT"]);

export function createSessionSetup(options: SessionSetupOptions): (folder: string) => void {
  const refreshed = new Set<string>();
  return (folder) => {
    const { link, library } = options;
    try {
      if (link?.target !== undefined) {
        placeLink(join(folder, link.name), link.target);
        excludeFromGit(folder, link.name);
      } else if (link) {
        removeLink(join(folder, link.name));
      }
    } catch (error) {
      if (!TOLERATED.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
      options.logger.warn({ folder, code: (error as NodeJS.ErrnoException).code }, "session folder link left as it is");
    }
    if (library && !refreshed.has(folder)) {
      refreshed.add(folder);
      try {
        ensureFresh(library.dir, library);
      } catch (error) {
        options.logger.warn({ err: error, library: library.dir }, "cannot refresh the library index");
      }
    }
  };
}

function linkTarget(path: string): string | undefined | null {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch {
    return undefined;
  }
}

/** Absolute target: the OS sandbox binds the library at the same path, so it resolves inside too. */
function placeLink(path: string, target: string): void {
  const current = linkTarget(path);
  if (current === target || current === null) return;
  if (current === undefined) {
    symlinkSync(target, path);
    return;
  }
  // Re-pointed atomically: a new link beside it, renamed over the old one.
  const temp = `${path}.relink-${process.pid}`;
  rmSync(temp, { force: true });
  symlinkSync(target, temp);
  renameSync(temp, path);
}

function removeLink(path: string): void {
  if (typeof linkTarget(path) === "string") rmSync(path);
}

/** Appends `/<name>` to .git/info/exclude once, when the folder is a git checkout. */
function excludeFromGit(folder: string, name: string): void {
  const gitDir = join(folder, ".git");
  try {
    if (!lstatSync(gitDir).isDirectory()) return;
  } catch {
    return;
  }
  const exclude = join(gitDir, "info", "exclude");
  const line = `/${name}`;
  let text = "";
  try {
    text = readFileSync(exclude, "utf8");
  } catch {
    mkdirSync(join(gitDir, "info"), { recursive: true });
  }
  if (text.split("\n").some((existing) => existing.trim() === line)) return;
  appendFileSync(exclude, `${text.length > 0 && !text.endsWith("\n") ? "\n" : ""}${line}\n`);
}
