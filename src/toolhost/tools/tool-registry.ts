import type { Tool } from "./define-tool.js";
import { fileEditTool } from "./file-edit.js";
import { fileGlobTool } from "./file-glob.js";
import { fileGrepTool } from "./file-grep.js";
import { fileListTool } from "./file-list.js";
import { fileReadTool } from "./file-read.js";
import { fileWriteTool } from "./file-write.js";
import { createShellExecTool } from "./shell-exec.js";

/** Every tool an agent's toolhost serves, in the order `tool.list` shows them. */
export function createTools(options: { allowedCommands: readonly string[] }): Tool[] {
  return [fileReadTool, fileListTool, fileWriteTool, fileEditTool, fileGrepTool, fileGlobTool, createShellExecTool(options.allowedCommands)];
}
