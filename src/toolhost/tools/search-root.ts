import { closeSync } from "node:fs";
import type { ToolContext } from "./define-tool.js";
import { openPinnedRoot } from "./pinned-folder.js";

/** Where grep, glob and list start: a folder held by descriptor (walk it with walkTree), or a file. */
export type SearchRoot = { realPath: string; folderFd: number | undefined };

/**
 * Resolves the optional `path` of grep/glob/list (default: the working folder), opens it
 * if it is a folder, runs `work`, and closes the folder whatever `work` does.
 */
export async function inSearchRoot<T>(
  path: string | undefined,
  context: ToolContext,
  work: (root: SearchRoot) => Promise<T>,
): Promise<T> {
  const input = path ?? ".";
  const { realPath } = context.sandbox.resolve(input, context.cwd, "read");
  const folderFd = openPinnedRoot(context.sandbox, realPath, input);
  try {
    return await work({ realPath, folderFd });
  } finally {
    if (folderFd !== undefined) closeSync(folderFd);
  }
}
