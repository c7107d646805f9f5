/**
 * Walks a folder without following links (a link is reported, never entered), so grep,
 * glob and list can never wander out of the sandbox roots through one.
 */
import { lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join, relative } from "node:path";

export type WalkEntry = { path: string; rel: string; type: "file" | "dir" | "link" | "other"; size: number; depth: number; target?: string };

export function* walkTree(root: string, options: { maxDepth: number; signal?: AbortSignal }): Generator<WalkEntry> {
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 1 }];
  while (stack.length > 0) {
    const { dir, depth } = stack.pop() as { dir: string; depth: number };
    if (options.signal?.aborted) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    const subdirs: string[] = [];
    for (const name of names) {
      const path = join(dir, name);
      let stats;
      try {
        stats = lstatSync(path);
      } catch {
        continue;
      }
      const type = stats.isSymbolicLink() ? "link" : stats.isDirectory() ? "dir" : stats.isFile() ? "file" : "other";
      const entry: WalkEntry = { path, rel: relative(root, path), type, size: stats.size, depth };
      if (type === "link") entry.target = safeReadlink(path);
      yield entry;
      if (type === "dir" && depth < options.maxDepth) subdirs.push(path);
    }
    for (const sub of subdirs.reverse()) stack.push({ dir: sub, depth: depth + 1 });
  }
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}
