/**
 * What `laoding share` would do, computed without writing anything: every file of every
 * mapped legacy item and where each agent's copy goes (`agents/<A>/<to or path>`), every
 * Go-era skill and what it becomes, and the state of each destination as the agent's own
 * toolhost sees it: missing (copy), identical by hash and mode (already there), or
 * different (a conflict that stops apply). The legacy items are the operator's files at
 * the share root and are read directly; agents' trees only through their toolhosts.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { isGoEraDraftName, isGoEraSkillName, normalizeGoEraSkillText, normalizeSkillName } from "../knowledge/go-era-skill.js";
import type { MaintenancePool } from "../runtime/library-maintenance.js";
import { DEFAULT_TOOL_LIMITS } from "../toolhost/tools/define-tool.js";
import type { OperatorStat } from "../toolhost/tools/operator-tools.js";
import { RESERVED_SHARE_NAMES, type LoadedMapping } from "./share-mapping.js";

/**
 * Largest file copied through a toolhost: its write limit, and what fits one protocol
 * frame as base64. Bigger files are conflicts to copy by hand.
 */
export function copyMaxBytes(maxFrameBytes: number): number {
  return Math.min(DEFAULT_TOOL_LIMITS.writeMaxBytes, Math.floor((maxFrameBytes - FRAME_ENVELOPE_BYTES) / 4) * 3);
}
const FRAME_ENVELOPE_BYTES = 4096;

export type CopyState = "copy" | "same" | "conflict";
export type PlannedCopy = {
  agentId: string;
  source: string;
  dest: string;
  mode: number;
  sizeBytes: number;
  sha256: string;
  state: CopyState;
  /** Why a conflict is one. */
  reason?: string;
  /** The bytes to write when they differ from the source's (a normalised Go-era SKILL.md). */
  content?: Buffer;
};
export type GoSkill = { folder: string; file: string; becomes: string; action: string };
export type SharePlan = { mappingHash: string; shareDir: string; copies: PlannedCopy[]; conflicts: string[]; goSkills: GoSkill[]; unmapped: string[] };

export async function planShare(layout: RuntimeLayout, loaded: LoadedMapping, maintenance: MaintenancePool, maxCopyBytes: number): Promise<SharePlan> {
  const { mapping } = loaded;
  const conflicts: string[] = [];
  const wanted: Omit<PlannedCopy, "state">[] = [];
  for (const item of mapping.items) {
    const root = join(layout.shareDir, item.path);
    if (!existsSync(root) && !isLink(root)) {
      conflicts.push(`${root}: the mapping names it but it does not exist`);
      continue;
    }
    for (const file of legacyFiles(root, conflicts)) {
      const bytes = readFileSync(file.path);
      const inside = relative(root, file.path);
      for (const agentId of item.agents) {
        const dest = join(layout.agentTrees(agentId).privateDir, item.to ?? item.path, inside);
        wanted.push({ agentId, source: file.path, dest, mode: file.mode, sizeBytes: bytes.length, sha256: sha256(bytes) });
      }
    }
  }
  const goSkills = planGoSkills(layout, loaded, wanted, conflicts);
  const copies: PlannedCopy[] = [];
  for (const [agentId, group] of groupBy(wanted, (copy) => copy.agentId)) {
    const stats = await maintenance.agent(agentId).files.stat(group.map((copy) => copy.dest), true);
    group.forEach((copy, index) => {
      const state = destinationState(copy, stats[index], maxCopyBytes);
      copies.push({ ...copy, ...state });
      if (state.state === "conflict") conflicts.push(`${copy.dest} (agent ${agentId}): ${state.reason}`);
    });
  }
  return { mappingHash: loaded.hash, shareDir: layout.shareDir, copies, conflicts, goSkills, unmapped: unmappedItems(layout, loaded) };
}

function destinationState(copy: Omit<PlannedCopy, "state">, found: OperatorStat | undefined, maxCopyBytes: number): { state: CopyState; reason?: string } {
  if (copy.sizeBytes > maxCopyBytes) return { state: "conflict", reason: `${copy.sizeBytes} bytes is over the ${maxCopyBytes}-byte limit of a copy through the toolhost; copy it by hand as the agent's uid` };
  if (!found || "error" in found) return { state: "conflict", reason: `the agent's toolhost cannot reach it (${found && "error" in found ? found.error : "no answer"})` };
  if (found.type === "missing") return { state: "copy" };
  if (found.type !== "file") return { state: "conflict", reason: `a ${found.type} is already there` };
  if (found.sha256 === copy.sha256 && found.mode === copy.mode) return { state: "same" };
  return { state: "conflict", reason: found.sha256 === copy.sha256 ? `already there with mode ${octal(found.mode ?? 0)}, the source has ${octal(copy.mode)}` : "a different file is already there" };
}

/** Regular files below a legacy item (or the item itself), sorted; links and devices are conflicts. */
function legacyFiles(root: string, conflicts: string[]): { path: string; mode: number }[] {
  const stats = lstatSync(root);
  if (stats.isFile()) return [{ path: root, mode: stats.mode & 0o777 }];
  if (!stats.isDirectory()) {
    conflicts.push(`${root}: a ${stats.isSymbolicLink() ? "link" : "special file"} is not copied; copy what it points to by hand`);
    return [];
  }
  return readdirSync(root)
    .sort()
    .flatMap((name) => legacyFiles(join(root, name), conflicts));
}

/**
 * Go-era skills in the old skills folder (default: the workspace's base skills): what each
 * becomes, and the copies of the `auto_*` drafts the mapping assigns to an agent.
 */
function planGoSkills(layout: RuntimeLayout, loaded: LoadedMapping, wanted: Omit<PlannedCopy, "state">[], conflicts: string[]): GoSkill[] {
  const dir = loaded.mapping.goSkills?.dir ?? layout.baseSkillsDir;
  const owners = new Map((loaded.mapping.goSkills?.drafts ?? []).map((draft) => [draft.name, draft.agent]));
  if (!existsSync(dir)) {
    if (owners.size > 0) conflicts.push(`${dir}: the Go-era skills folder does not exist`);
    return [];
  }
  const folders = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const skills: GoSkill[] = [];
  for (const folder of folders.filter(isGoEraSkillName)) {
    const file = ["skill.md", "SKILL.md"].map((name) => join(dir, folder, name)).find((path) => existsSync(path));
    if (!file) continue;
    const becomes = normalizeSkillName(folder);
    const owner = owners.get(folder);
    if (folders.includes(becomes)) {
      skills.push({ folder, file, becomes, action: `skipped: its name collides with the skill folder ${join(dir, becomes)}` });
    } else if (owner) {
      const content = Buffer.from(normalizeGoEraSkillText(readFileSync(file, "utf8"), folder), "utf8");
      const dest = join(layout.agentTrees(owner).skillsDir, becomes, "SKILL.md");
      wanted.push({ agentId: owner, source: file, dest, mode: 0o644, sizeBytes: content.length, sha256: sha256(content), content });
      skills.push({ folder, file, becomes, action: `copied to agent ${owner}'s skills as ${dest}` });
    } else if (isGoEraDraftName(folder)) {
      skills.push({ folder, file, becomes, action: `stays; loaded as ${becomes} for every agent. To give this draft to its agent, add {"name":"${folder}","agent":"<id>"} to goSkills.drafts` });
    } else {
      skills.push({ folder, file, becomes, action: `stays where it is; loaded as ${becomes} (folder untouched)` });
    }
  }
  for (const name of owners.keys()) if (!skills.some((skill) => skill.folder === name)) conflicts.push(`${join(dir, name)}: the mapping names this Go-era draft but it has no skill.md`);
  return skills;
}

/** Legacy items at the share root the mapping does not mention (they stay, and cleanup leaves them). */
function unmappedItems(layout: RuntimeLayout, loaded: LoadedMapping): string[] {
  if (!existsSync(layout.shareDir)) return [];
  const mapped = new Set(loaded.mapping.items.map((item) => item.path.split("/")[0]));
  return readdirSync(layout.shareDir)
    .filter((name) => !RESERVED_SHARE_NAMES.has(name) && !mapped.has(name))
    .sort()
    .map((name) => join(layout.shareDir, name));
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

export function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}
