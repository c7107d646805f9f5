import { closeSync, readSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";
import type { PathSandbox } from "../sandbox/path-sandbox.js";
import { defineTool, READS_ONLY } from "./define-tool.js";
import { openForRead } from "./file-access.js";
import { globMatcher } from "./glob-pattern.js";
import { inSearchRoot } from "./search-root.js";
import { compileLinear, MAX_MATCH_CHARS, MAX_PROGRAM_INSTRUCTIONS, MAX_REPEAT_COUNT } from "./linear-regex.js";
import { walkBudget } from "./walk-budget.js";
import { walkTree, type WalkEntry } from "./walk-tree.js";

const MAX_DEPTH = 32;
const MAX_LINE_CHARS = 300;

export const fileGrepTool = defineTool({
  name: "file.grep",
  description: `Search files for a regular expression (RE2 syntax: like JavaScript's without backreferences or lookaround; matching is linear-time; repetition counts at most ${MAX_REPEAT_COUNT}, at most ${MAX_PROGRAM_INSTRUCTIONS} compiled instructions; a long line is searched in its first ${MAX_MATCH_CHARS / 1024} KiB at most, less for a large pattern). \`path\` is a file or folder (default: the working folder); \`glob\` filters file names (e.g. *.md). Returns file:line: text, capped at max_results. Links are never followed.`,
  hints: READS_ONLY,
  inputSchema: z
    .object({
      pattern: z.string().min(1).max(1_000),
      path: z.string().optional(),
      glob: z.string().max(500).optional(),
      max_results: z.number().int().min(1).max(1_000).optional(),
    })
    .strict(),
  async execute(args, context) {
    const regex = compileLinear(args.pattern, "pattern");
    const limit = Math.min(args.max_results ?? context.limits.grepMaxResults, 1_000);
    const matchesGlob = args.glob ? globMatcher(args.glob, "glob") : () => true;
    return inSearchRoot(args.path, context, async (root) => {
      const entries: Iterable<WalkEntry> =
        root.folderFd === undefined
          ? [{ rel: basename(root.realPath), at: root.realPath, type: "file", size: 0, depth: 0 }]
          : walkTree(root.folderFd, { maxDepth: MAX_DEPTH, signal: context.signal });
      const results: string[] = [];
      let skipped = 0;
      let longLines = 0;
      const budget = walkBudget(context.limits.outputMaxBytes);
      const stopped = (marker: string) => ({ output: `${results.join("\n")}\n…[${marker}]`, truncated: true });
      for (const entry of entries) {
        if (!budget.visit()) break;
        await budget.pause(context.signal);
        if (budget.stoppedBecause) break;
        if (entry.type !== "file" || !matchesGlob(entry.rel)) continue;
        const text = readText(entry.at, context.limits.grepMaxFileBytes, context.sandbox);
        if (text === undefined) {
          skipped += 1;
          continue;
        }
        const lines = text.split("\n");
        for (let index = 0; index < lines.length; index += 1) {
          // Between lines, not only between files: one file of long lines is seconds of work.
          if (budget.due()) {
            await budget.pause(context.signal);
            if (budget.stoppedBecause) return stopped(budget.stoppedBecause);
          }
          const line = lines[index] as string;
          if (line.length > regex.maxChars) longLines += 1;
          if (!regex.test(line)) continue;
          const result = `${entry.rel}:${index + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`;
          results.push(result);
          if (results.length >= limit) return stopped(`stopped at ${limit} matches`);
          if (!budget.collect(result)) return stopped(budget.stoppedBecause as string);
        }
      }
      if (budget.stoppedBecause) return stopped(budget.stoppedBecause);
      const notes = [
        ...(skipped > 0 ? [`${skipped} binary or oversized files skipped`] : []),
        ...(longLines > 0
          ? [
              `${longLines} lines longer than ${regex.maxChars} characters were searched in their first ${regex.maxChars} only`,
            ]
          : []),
      ];
      if (results.length === 0)
        return { output: `no matches${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`, truncated: false };
      return { output: `${results.join("\n")}${notes.length > 0 ? `\n…[${notes.join("; ")}]` : ""}`, truncated: false };
    });
  },
});

/** The file's text, or undefined for binary, oversized or unreadable files. */
function readText(path: string, maxBytes: number, sandbox: PathSandbox): string | undefined {
  let opened;
  try {
    opened = openForRead(sandbox, path, path);
  } catch {
    return undefined;
  }
  try {
    if (opened.stats.size > maxBytes) return undefined;
    const buffer = Buffer.alloc(opened.stats.size);
    const count = readSync(opened.fd, buffer, 0, buffer.length, 0);
    const data = buffer.subarray(0, count);
    if (data.subarray(0, 8_192).includes(0)) return undefined;
    return data.toString("utf8");
  } finally {
    closeSync(opened.fd);
  }
}
