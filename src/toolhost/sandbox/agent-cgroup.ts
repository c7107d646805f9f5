/**
 * One memory and pids control group per agent, holding its toolhost child and every
 * command the child starts (they inherit it), so the agent's total memory (tmpfs pages
 * included: the kernel charges them to the group that wrote them) and its process count
 * are bounded together, whatever the number of processes. RLIMIT_DATA bounds one process
 * only; four workers each under it held 3.6 GB.
 *
 * cgroup v2 (`memory.max`, `pids.max`) where the unified hierarchy has both controllers;
 * otherwise the v1 `memory` and `pids` hierarchies (what the development machines here
 * mount). Groups live under `laoding/bot-<pid>/` in each hierarchy, so two bots (or two
 * test workers) never share one, and a bot's leftover groups are found and removed by the
 * next start. Only root creates them; where that fails, the launch goes on without a
 * group and the reason is said as a warning (docs/isolation.md says what still holds).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type CgroupHierarchies = { version: 2; root: string } | { version: 1; memory: string; pids: string };

export type AgentCgroupLimits = { memoryBytes: number; maxProcesses: number };

/** The `cgroup.procs` files a process writes its pid to, before it runs anything, to join the agent's groups. */
export type AgentCgroup = { procsFiles: string[]; dirs: string[] };

const GROUP_ROOT = "laoding";

/** Reads where the cgroup hierarchies are mounted (from /proc/self/mountinfo text); undefined when neither usable kind is. */
export function findCgroupHierarchies(
  mountinfo: string,
  exists: (path: string) => boolean = existsSync,
  read: (path: string) => string = (path) => readFileSync(path, "utf8"),
): CgroupHierarchies | undefined {
  let memory: string | undefined;
  let pids: string | undefined;
  let unified: string | undefined;
  for (const line of mountinfo.split("\n")) {
    // Fields: id parent major:minor root mountpoint options [optional...] - fstype source super-options
    const [before, after] = line.split(" - ");
    if (!before || !after) continue;
    const mountPoint = unescapeMountPath(before.split(" ")[4] ?? "");
    const [fsType, , superOptions = ""] = after.split(" ");
    if (fsType === "cgroup2") unified ??= mountPoint;
    if (fsType !== "cgroup") continue;
    const options = superOptions.split(",");
    if (options.includes("memory")) memory ??= mountPoint;
    if (options.includes("pids")) pids ??= mountPoint;
  }
  if (unified && exists(join(unified, "cgroup.controllers"))) {
    const controllers = read(join(unified, "cgroup.controllers")).trim().split(/\s+/);
    if (controllers.includes("memory") && controllers.includes("pids")) return { version: 2, root: unified };
  }
  if (memory && pids) return { version: 1, memory, pids };
  return undefined;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export class CgroupUnavailableError extends Error {
  override readonly name = "CgroupUnavailableError";
}

/**
 * Creates (or reuses) the agent's group in each hierarchy and writes its limits.
 * Throws CgroupUnavailableError with the file and the system's words when the kernel refuses.
 */
export function createAgentCgroup(
  hierarchies: CgroupHierarchies,
  botPid: number,
  agentId: string,
  limits: AgentCgroupLimits,
): AgentCgroup {
  const bot = `bot-${botPid}`;
  try {
    if (hierarchies.version === 2) {
      const top = join(hierarchies.root, GROUP_ROOT);
      const dir = join(top, bot, agentId);
      mkdirSync(dir, { recursive: true });
      // v2 hands controllers down one level at a time; a group with processes of its own
      // cannot hand them down, which is why the agents' groups sit under a group of ours.
      for (const parent of [hierarchies.root, top, join(top, bot)]) enableControllers(parent);
      writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
      writeIfPresent(join(dir, "memory.swap.max"), "0");
      writeFileSync(join(dir, "pids.max"), String(limits.maxProcesses));
      return { procsFiles: [join(dir, "cgroup.procs")], dirs: [dir] };
    }
    const memoryDir = join(hierarchies.memory, GROUP_ROOT, bot, agentId);
    const pidsDir = join(hierarchies.pids, GROUP_ROOT, bot, agentId);
    mkdirSync(memoryDir, { recursive: true });
    mkdirSync(pidsDir, { recursive: true });
    // memsw (memory + swap) must stay at or above the memory limit: lower it after, raise it before.
    const memsw = join(memoryDir, "memory.memsw.limit_in_bytes");
    writeIfPresent(memsw, "-1");
    writeFileSync(join(memoryDir, "memory.limit_in_bytes"), String(limits.memoryBytes));
    writeIfPresent(memsw, String(limits.memoryBytes));
    writeFileSync(join(pidsDir, "pids.max"), String(limits.maxProcesses));
    return { procsFiles: [join(memoryDir, "cgroup.procs"), join(pidsDir, "cgroup.procs")], dirs: [memoryDir, pidsDir] };
  } catch (error) {
    const { code, path, message } = error as NodeJS.ErrnoException;
    throw new CgroupUnavailableError(
      `cannot set up agent ${agentId}'s control group${path ? ` (${path})` : ""}: ${code ?? message}`,
    );
  }
}

function enableControllers(dir: string): void {
  const file = join(dir, "cgroup.subtree_control");
  const enabled = readFileSync(file, "utf8").split(/\s+/);
  const missing = ["memory", "pids"].filter((name) => !enabled.includes(name));
  if (missing.length > 0) writeFileSync(file, missing.map((name) => `+${name}`).join(" "));
}

function writeIfPresent(file: string, value: string): void {
  if (existsSync(file)) writeFileSync(file, value);
}

/** The current memory limit and pid count of a group, for `laoding` checks and tests. */
export function readAgentCgroup(group: AgentCgroup): { memoryLimitBytes: number; pidsMax: string; members: number[] } {
  const [first] = group.dirs as [string];
  const v2 = existsSync(join(first, "memory.max"));
  const memoryDir = first;
  const pidsDir = group.dirs[group.dirs.length - 1] as string;
  const limit = readFileSync(join(memoryDir, v2 ? "memory.max" : "memory.limit_in_bytes"), "utf8").trim();
  const members = readFileSync(join(memoryDir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  return {
    memoryLimitBytes: limit === "max" ? Infinity : Number(limit),
    pidsMax: readFileSync(join(pidsDir, "pids.max"), "utf8").trim(),
    members,
  };
}

/**
 * Removes the groups of bots that are gone (their pid no longer runs): each holds no
 * process once its bot and children are gone, so rmdir succeeds; a group still in use is
 * left alone (rmdir refuses a group with members).
 */
export function removeStaleGroups(
  hierarchies: CgroupHierarchies,
  isAlive: (pid: number) => boolean,
  ownPid: number,
): void {
  const tops = hierarchies.version === 2 ? [hierarchies.root] : [hierarchies.memory, hierarchies.pids];
  for (const top of tops.map((dir) => join(dir, GROUP_ROOT))) {
    let bots: string[];
    try {
      bots = readdirSync(top).filter((name) => /^bot-\d+$/.test(name));
    } catch {
      continue;
    }
    for (const bot of bots) {
      const pid = Number(bot.slice(4));
      if (pid === ownPid || isAlive(pid)) continue;
      removeGroupTree(join(top, bot));
    }
  }
}

/** rmdir of a group and its sub-groups, deepest first; a group that still has members stays. */
export function removeGroupTree(dir: string): void {
  let children: string[] = [];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return;
  }
  for (const child of children) removeGroupTree(join(dir, child));
  try {
    rmdirSync(dir);
  } catch {
    // In use (a child still runs), or already gone.
  }
}

export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
