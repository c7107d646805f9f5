import { z } from "zod";
import { ToolError } from "../tool-error.js";
import { defineTool, READS_ONLY } from "./define-tool.js";
import { globMatcher } from "./glob-pattern.js";
import { inSearchRoot } from "./search-root.js";
import { walkBudget } from "./walk-budget.js";
import { walkTree } from "./walk-tree.js";

export const fileGlobTool = defineTool({
  name: "file.glob",
  description:
    "Find files by glob pattern (**, *, ?, {a,b}, [abc]) relative to `path` (default: the working folder). Links are never followed.",
  hints: READS_ONLY,
  inputSchema: z.object({ pattern: z.string().min(1).max(500), path: z.string().optional() }).strict(),
  async execute(args, context) {
    const matches = globMatcher(args.pattern, "pattern");
    return inSearchRoot(args.path, context, async (root) => {
      if (root.folderFd === undefined) throw new ToolError("NOT_A_DIRECTORY", `${args.path ?? "."} is not a directory`);
      const budget = walkBudget(context.limits.outputMaxBytes);
      const found: string[] = [];
      for (const entry of walkTree(root.folderFd, { maxDepth: 32, signal: context.signal })) {
        if (!budget.visit()) break;
        await budget.pause(context.signal);
        if (entry.type === "dir" || !matches(entry.rel)) continue;
        if (found.length >= context.limits.globMaxResults) {
          return {
            output: `${found.join("\n")}\n…[stopped at ${context.limits.globMaxResults} results]`,
            truncated: true,
          };
        }
        found.push(entry.rel);
        if (!budget.collect(entry.rel)) break;
      }
      if (budget.stoppedBecause) return { output: `${found.join("\n")}\n…[${budget.stoppedBecause}]`, truncated: true };
      return { output: found.length > 0 ? found.join("\n") : "no files match", truncated: false };
    });
  },
});
