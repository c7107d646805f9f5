import { z } from "zod";
import { ToolError } from "../tool-error.js";
import { defineTool, READS_ONLY } from "./define-tool.js";
import { inSearchRoot } from "./search-root.js";
import { walkBudget } from "./walk-budget.js";
import { walkTree } from "./walk-tree.js";

export const fileListTool = defineTool({
  name: "file.list",
  description:
    "List a folder's entries with type and size. `depth` (default 1, at most 5) descends into subfolders. Links are shown, never followed.",
  hints: READS_ONLY,
  inputSchema: z
    .object({
      path: z.string().describe("Folder path, relative to the working folder or absolute"),
      depth: z.number().int().min(1).max(5).optional(),
    })
    .strict(),
  async execute(args, context) {
    return inSearchRoot(args.path, context, async (root) => {
      if (root.folderFd === undefined)
        throw new ToolError("NOT_A_DIRECTORY", `${args.path} is not a directory; use file.read`);
      const lines: string[] = [];
      let truncated = false;
      const budget = walkBudget(context.limits.outputMaxBytes);
      for (const entry of walkTree(root.folderFd, { maxDepth: args.depth ?? 1, signal: context.signal })) {
        if (lines.length >= context.limits.listMaxEntries) {
          truncated = true;
          break;
        }
        if (!budget.visit()) break;
        await budget.pause(context.signal);
        const name = entry.type === "dir" ? `${entry.rel}/` : entry.rel;
        const detail =
          entry.type === "file" ? `${entry.size}` : entry.type === "link" ? `-> ${entry.target ?? "?"}` : "";
        const line = `${entry.type.padEnd(4)} ${name}${detail ? `  ${detail}` : ""}`;
        lines.push(line);
        if (!budget.collect(line)) break;
      }
      if (lines.length === 0) return { output: `${args.path} is empty`, truncated: false };
      if (truncated) lines.push(`…[listing stopped at ${context.limits.listMaxEntries} entries]`);
      else if (budget.stoppedBecause) lines.push(`…[${budget.stoppedBecause}]`);
      return { output: lines.join("\n"), truncated: truncated || budget.stoppedBecause !== undefined };
    });
  },
});
