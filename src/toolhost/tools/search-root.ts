import { statSync } from "node:fs";
import type { ToolContext } from "./define-tool.js";
import { fsError } from "./file-access.js";

/** Resolves the optional `path` of grep/glob (default: the working folder). */
export function searchRoot(path: string | undefined, context: ToolContext): { realPath: string; isDirectory: boolean } {
  const resolved = context.sandbox.resolve(path ?? ".", context.cwd, "read");
  try {
    return { realPath: resolved.realPath, isDirectory: statSync(resolved.realPath).isDirectory() };
  } catch (error) {
    throw fsError(error, path ?? ".");
  }
}
