import { closeSync, readSync } from "node:fs";
import { basename, dirname } from "node:path";
import { z } from "zod";
import type { PathSandbox } from "../sandbox/path-sandbox.js";
import { defineTool, READS_ONLY } from "./define-tool.js";
import { openForRead } from "./file-access.js";
import { globMatcher } from "./glob-pattern.js";
import { searchRoot } from "./search-root.js";
import { compileLinear } from "./linear-regex.js";
import { walkBudget } from "./walk-budget.js";
import { walkTree, type WalkEntry } from "./walk-tree.js";

const MAX_DEPTH = 32;
const MAX_LINE_CHARS = 300;

export const fileGrepTool = defineTool({
  name: "file.grep",
  description:
    "Search files for a regular expression (RE2 syntax: like JavaScript's without backreferences or lookaround; matching is linear-time). `path` is a file or folder (default: the working folder); `glob` filters file names (e.g. *.md). Returns file:line: text, capped at max_results. Links are never followed.",
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
    const root = searchRoot(args.path, context);
    const files: Iterable<WalkEntry> = root.isDirectory
      ? walkTree(root.realPath, { maxDepth: MAX_DEPTH, signal: context.signal })
      : [{ path: root.realPath, rel: basename(root.realPath), type: "file", size: 0, depth: 0 }];
    const base = root.isDirectory ? root.realPath : dirname(root.realPath);
    const results: string[] = [];
    let skipped = 0;
    const budget = walkBudget(context.limits.outputMaxBytes);
    for (const entry of files) {
      if (!budget.visit()) break;
      await budget.pause(context.signal);
      if (budget.stoppedBecause) break;
      if (entry.type !== "file" || !matchesGlob(entry.rel)) continue;
      const text = readText(entry.path, context.limits.grepMaxFileBytes, context.sandbox);
      if (text === undefined) {
        skipped += 1;
        continue;
      }
      const lines = text.split("\n");
      for (let index = 0; index < lines.length; index += 1) {
        const line = lines[index] as string;
        if (!regex.test(line)) continue;
        const result = `${entry.path.slice(base.length + 1) || entry.rel}:${index + 1}: ${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`;
        results.push(result);
        if (results.length >= limit) return { output: `${results.join("\n")}\n…[stopped at ${limit} matches]`, truncated: true };
        if (!budget.collect(result)) return { output: `${results.join("\n")}\n…[${budget.stoppedBecause}]`, truncated: true };
      }
    }
    if (budget.stoppedBecause) return { output: `${results.join("\n")}\n…[${budget.stoppedBecause}]`, truncated: true };
    if (results.length === 0) return { output: `no matches${skipped > 0 ? ` (${skipped} binary or oversized files skipped)` : ""}`, truncated: false };
    return { output: results.join("\n"), truncated: false };
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
