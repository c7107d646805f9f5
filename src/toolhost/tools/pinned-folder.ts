/**
 * Folders held by descriptor, for the walks of file.list, file.glob and file.grep. A walk
 * by path strings re-resolves every name on the way each time it is used, so an agent's
 * own shell swapping a folder for a link (renameat2 RENAME_EXCHANGE, in a loop) while the
 * walk runs made it list a host folder (issue 32, item 8). Here the walk's root is opened
 * O_DIRECTORY|O_NOFOLLOW and its real path re-checked through /proc/self/fd; below it,
 * every name is reached through /proc/self/fd/<fd>/<name> (only that last name is looked
 * up, and never followed), as src/toolhost/sandbox/agent-trees.ts does for the bot's walks.
 */
import { closeSync, constants, openSync, readlinkSync } from "node:fs";
import type { PathSandbox } from "../sandbox/path-sandbox.js";
import { ToolError } from "../tool-error.js";
import { fsError } from "./file-access.js";

// O_NONBLOCK: nothing here waits on a FIFO; O_DIRECTORY refuses one before opening it.
const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** The name `name` inside the folder held by `fd`, looked up from that folder only. */
export function entryAt(fd: number, name: string): string {
  return `/proc/self/fd/${fd}/${name}`;
}

/**
 * Opens the folder at `realPath` (already resolved by the sandbox) and checks that the
 * folder opened is the one resolved, inside the agent's roots. Undefined when it is not
 * a folder. The caller closes the descriptor.
 */
export function openPinnedRoot(sandbox: PathSandbox, realPath: string, input: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(realPath, FOLDER_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw fsError(error, input);
  }
  try {
    const opened = readlinkSync(`/proc/self/fd/${fd}`);
    sandbox.assertInside(opened, input);
    // Inside the roots yet not what was resolved: a folder on the way was swapped meanwhile.
    if (opened !== realPath)
      throw new ToolError("PATH_NOT_ALLOWED", `${input} changed while it was being opened; try again`);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw fsError(error, input);
  }
}

/** Opens the subfolder `name` of the folder held by `parentFd`; undefined if it is no longer a folder there. */
export function openSubfolder(parentFd: number, name: string): number | undefined {
  try {
    return openSync(entryAt(parentFd, name), FOLDER_FLAGS);
  } catch {
    // Swapped for a link or a file, removed, or not enterable since it was listed.
    return undefined;
  }
}
