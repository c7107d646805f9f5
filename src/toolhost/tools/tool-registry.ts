import type { Tool } from "./define-tool.js";
import { fileEditTool } from "./file-edit.js";
import { fileGlobTool } from "./file-glob.js";
import { fileGrepTool } from "./file-grep.js";
import { fileListTool } from "./file-list.js";
import { fileReadTool } from "./file-read.js";
import { fileWriteTool } from "./file-write.js";
import { createLibraryTools, withLibraryRefresh, type LibrarySettings } from "./library-tools.js";
import { createOperatorTools } from "./operator-tools.js";
import { createShellExecTool, type EgressRefusals } from "./shell-exec.js";

/**
 * Every tool an agent's toolhost serves, in the order `tool.list` shows them. With the
 * experience library enabled, its tools come next and writes into it refresh its index; an
 * operator's maintenance child also serves the operator.* tools, last.
 */
export function createTools(options: {
  allowedCommands: readonly string[];
  /** Commands may reach the network (the host's, or through the egress proxy). */
  network: boolean;
  library?: LibrarySettings | undefined;
  operatorTools?: boolean | undefined;
  /** The egress proxy's refusals, when the agent has an allow list. */
  refusals?: EgressRefusals | undefined;
  /** web.fetch is offered when the agent has a network: through the proxy or directly. */
  webFetch?: Tool | undefined;
}): Tool[] {
  const { library } = options;
  const writing = (tool: Tool) => (library ? withLibraryRefresh(tool, library) : tool);
  return [
    fileReadTool,
    fileListTool,
    writing(fileWriteTool),
    writing(fileEditTool),
    fileGrepTool,
    fileGlobTool,
    createShellExecTool(options.allowedCommands, options.network, options.refusals),
    ...(options.webFetch ? [options.webFetch] : []),
    ...(library ? createLibraryTools(library) : []),
    ...(options.operatorTools ? createOperatorTools(library) : []),
  ];
}
