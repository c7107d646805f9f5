/**
 * Finds and kills what a finished command left behind when the toolhost child runs as its
 * agent's own uid. A command can leave its process group (`setsid`), drop the
 * environment tag the runner looks for, and wait to kill the child later; once its bash
 * has exited it is no longer below the child in the process tree. Every process of the
 * agent's uid is the agent's (one uid per agent), so anything of that uid that does not
 * descend from the child itself is a leftover: the child, its running commands and their
 * children are kept, everything else of the uid is SIGKILLed.
 *
 * In a jail the child sees only its own pid namespace, so this never reaches another
 * toolhost; without one (`none-unsafe`) it also stops another toolhost of the same agent
 * (an operator's maintenance child), which starts again on its next use.
 */
import { readdirSync, readFileSync } from "node:fs";

export type ProcessEntry = { pid: number; ppid: number; uid: number; threads: number };

/** Real uid, parent and thread count of every process this process can see. */
export function listProcesses(): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const entries: ProcessEntry[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, "latin1");
      const ppid = /\nPPid:\s+(\d+)/.exec(status);
      const uid = /\nUid:\s+(\d+)/.exec(status);
      const threads = /\nThreads:\s+(\d+)/.exec(status);
      if (ppid && uid)
        entries.push({
          pid: Number(name),
          ppid: Number(ppid[1]),
          uid: Number(uid[1]),
          threads: threads ? Number(threads[1]) : 1,
        });
    } catch {
      // Gone while listing.
    }
  }
  return entries;
}

/** The processes of `uid` that do not descend from `keeper` (and are not it). */
export function leftoversOf(
  uid: number,
  keeper: number,
  processes: Pick<ProcessEntry, "pid" | "ppid" | "uid">[] = listProcesses(),
): number[] {
  const parentOf = new Map(processes.map((entry) => [entry.pid, entry.ppid]));
  const descends = (pid: number): boolean => {
    // Bounded by the table's size: a pid cycle cannot happen, but a changing table could.
    for (let step = 0, current = pid; step <= processes.length; step += 1) {
      if (current === keeper) return true;
      const parent = parentOf.get(current);
      if (parent === undefined || parent === 0 || parent === current) return false;
      current = parent;
    }
    return false;
  };
  return processes
    .filter((entry) => entry.uid === uid && entry.pid !== keeper && !descends(entry.pid))
    .map((entry) => entry.pid);
}

/** SIGKILLs the leftovers of `uid` (see above); returns their pids so the caller can wait for them. Refuses root's uid. */
export function killLeftovers(uid: number, keeper: number = process.pid): number[] {
  if (uid === 0) throw new Error("refusing to sweep uid 0: leftovers are found by an agent's own uid only");
  const killed: number[] = [];
  for (const pid of leftoversOf(uid, keeper)) {
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // Already gone.
    }
  }
  return killed;
}

/** Tasks (processes and their threads, as the kernel's limits count them) at and below each root pid. */
export function tasksBelow(
  roots: number[],
  processes: Pick<ProcessEntry, "pid" | "ppid" | "threads">[] = listProcesses(),
): Map<number, number> {
  const children = new Map<number, typeof processes>();
  for (const entry of processes) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const own = new Map(processes.map((entry) => [entry.pid, entry.threads]));
  const counts = new Map<number, number>();
  for (const root of roots) {
    let total = 0;
    const queue = [root];
    // Bounded by the table: each pid is visited once.
    const seen = new Set<number>();
    while (queue.length > 0) {
      const pid = queue.pop() as number;
      if (seen.has(pid)) continue;
      seen.add(pid);
      total += own.get(pid) ?? 0;
      for (const child of children.get(pid) ?? []) queue.push(child.pid);
    }
    counts.set(root, total);
  }
  return counts;
}
