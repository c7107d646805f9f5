/**
 * Walks a folder held by descriptor without following links (a link is reported, never
 * entered), so grep, glob and list never wander out of the sandbox roots through one,
 * not even through a folder swapped for a link while the walk runs (pinned-folder.ts).
 *
 * Each folder's descriptor is held while entries below it remain to be visited and
 * closed as soon as none do: depth first, that is at most one per level. Whatever the
 * caller does (stops early, throws), the generator's `finally` closes them all; the
 * root's descriptor stays the caller's.
 */
import { closeSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { entryAt, openSubfolder } from "./pinned-folder.js";

export type WalkEntry = {
  /** The path below the walk's root, by names. */
  rel: string;
  /** Where to open the entry without looking its folders up again: valid until the walk moves on. */
  at: string;
  type: "file" | "dir" | "link" | "other";
  size: number;
  depth: number;
  target?: string;
};

/** A folder being walked: closed once it has been read and no subfolder waits to be opened from it. */
type HeldFolder = { fd: number; holds: number; owned: boolean };
/** A folder to visit: opened from its parent's descriptor only when its turn comes (the root is open already). */
type Pending = { parent: HeldFolder | undefined; name: string; rel: string; depth: number };

export function* walkTree(rootFd: number, options: { maxDepth: number; signal?: AbortSignal }): Generator<WalkEntry> {
  const held = new Set<HeldFolder>();
  const release = (folder: HeldFolder) => {
    folder.holds -= 1;
    if (folder.holds > 0 || !folder.owned) return;
    held.delete(folder);
    closeSync(folder.fd);
  };
  const root: HeldFolder = { fd: rootFd, holds: 1, owned: false };
  const stack: Pending[] = [{ parent: undefined, name: "", rel: "", depth: 1 }];
  try {
    while (stack.length > 0) {
      const pending = stack.pop() as Pending;
      if (options.signal?.aborted) return;
      let folder = root;
      if (pending.parent) {
        const fd = openSubfolder(pending.parent.fd, pending.name);
        release(pending.parent);
        if (fd === undefined) continue;
        folder = { fd, holds: 1, owned: true };
        held.add(folder);
      }
      try {
        const subfolders: Pending[] = [];
        for (const name of namesIn(folder.fd)) {
          const at = entryAt(folder.fd, name);
          let stats;
          try {
            stats = lstatSync(at);
          } catch {
            continue;
          }
          const type = stats.isSymbolicLink()
            ? "link"
            : stats.isDirectory()
              ? "dir"
              : stats.isFile()
                ? "file"
                : "other";
          const rel = pending.rel ? `${pending.rel}/${name}` : name;
          const entry: WalkEntry = { rel, at, type, size: stats.size, depth: pending.depth };
          if (type === "link") entry.target = safeReadlink(at);
          yield entry;
          if (type === "dir" && pending.depth < options.maxDepth)
            subfolders.push({ parent: folder, name, rel, depth: pending.depth + 1 });
        }
        folder.holds += subfolders.length;
        for (const sub of subfolders.reverse()) stack.push(sub);
      } finally {
        release(folder);
      }
    }
  } finally {
    for (const folder of held) closeSync(folder.fd);
  }
}

function namesIn(fd: number): string[] {
  try {
    return readdirSync(`/proc/self/fd/${fd}`).sort();
  } catch {
    return [];
  }
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}
