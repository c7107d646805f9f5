/**
 * What `laoding share` would do, computed without writing anything: every file of every
 * mapped legacy item and where each agent's copy goes (`agents/<A>/<to or path>`), every
 * Go-era skill and what it becomes, and the state of each destination as the agent's own
 * toolhost sees it: missing (copy), identical by hash and mode (already there), or
 * different (a conflict that stops apply). The legacy items at the share root and the
 * Go-era skills are read directly, as root; agents' trees only through their toolhosts.
 *
 * Agents once wrote the legacy share and the Go-era skills, so a link there may be an
 * agent's way to a root-only file. Both are walked by descriptor from their root
 * (src/workspace/descriptor-walk.ts): a link anywhere on the way is a conflict that
 * names the link, never its target, and nothing is read through it.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import {
  isGoEraDraftName,
  isGoEraSkillName,
  normalizeGoEraSkillText,
  normalizeSkillName,
} from "../knowledge/go-era-skill.js";
import type { MaintenancePool } from "../runtime/library-maintenance.js";
import { MAX_TREE_DEPTH } from "../toolhost/sandbox/agent-trees.js";
import { DEFAULT_TOOL_LIMITS } from "../toolhost/tools/define-tool.js";
import type { OperatorStat } from "../toolhost/tools/operator-tools.js";
import {
  isRefusal,
  listNames,
  pinEntry,
  pinFolder,
  pinPath,
  readPinnedFile,
  PinnedReadError,
  type Pinned,
  type WalkRefusal,
} from "../workspace/descriptor-walk.js";
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
  /** Where the bytes come from, as shown. */
  source: string;
  /** A legacy file's path inside the share, by which apply reads it again. */
  inShare?: string;
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
/**
 * `conflicts` stop apply; `refused` are the sources among them that were not read because
 * reading them could reach outside (a link, a special file, a hard-linked file): verify
 * fails and cleanup refuses on them too, as cleanup removes by path.
 */
export type SharePlan = {
  mappingHash: string;
  shareDir: string;
  copies: PlannedCopy[];
  conflicts: string[];
  refused: string[];
  goSkills: GoSkill[];
  unmapped: string[];
};

/** What the walks of the sources found wrong. */
type Findings = { conflicts: string[]; refused: string[] };

function refuse(findings: Findings, text: string): void {
  findings.conflicts.push(text);
  findings.refused.push(text);
}

export async function planShare(
  layout: RuntimeLayout,
  loaded: LoadedMapping,
  maintenance: MaintenancePool,
  maxCopyBytes: number,
): Promise<SharePlan> {
  const { mapping } = loaded;
  const findings: Findings = { conflicts: [], refused: [] };
  const { conflicts } = findings;
  const wanted: Omit<PlannedCopy, "state">[] = [];
  for (const file of legacyFiles(
    layout.shareDir,
    mapping.items.map((item) => item.path),
    findings,
  )) {
    const item = file.item;
    for (const agentId of mapping.items[item]?.agents ?? []) {
      const to = mapping.items[item]?.to ?? file.itemPath;
      const dest = join(layout.agentTrees(agentId).privateDir, to, file.inside);
      wanted.push({
        agentId,
        source: join(layout.shareDir, file.inShare),
        inShare: file.inShare,
        dest,
        mode: file.mode,
        sizeBytes: file.sizeBytes,
        sha256: file.sha256,
      });
    }
  }
  const goSkills = planGoSkills(layout, loaded, wanted, findings);
  const copies: PlannedCopy[] = [];
  for (const [agentId, group] of groupBy(wanted, (copy) => copy.agentId)) {
    const stats = await maintenance.agent(agentId).files.stat(
      group.map((copy) => copy.dest),
      true,
    );
    group.forEach((copy, index) => {
      const state = destinationState(copy, stats[index], maxCopyBytes);
      copies.push({ ...copy, ...state });
      if (state.state === "conflict") conflicts.push(`${copy.dest} (agent ${agentId}): ${state.reason}`);
    });
  }
  return {
    mappingHash: loaded.hash,
    shareDir: layout.shareDir,
    copies,
    conflicts,
    refused: findings.refused,
    goSkills,
    unmapped: unmappedItems(layout, loaded),
  };
}

function destinationState(
  copy: Omit<PlannedCopy, "state">,
  found: OperatorStat | undefined,
  maxCopyBytes: number,
): { state: CopyState; reason?: string } {
  if (copy.sizeBytes > maxCopyBytes)
    return {
      state: "conflict",
      reason: `${copy.sizeBytes} bytes is over the ${maxCopyBytes}-byte limit of a copy through the toolhost; copy it by hand as the agent's uid`,
    };
  if (!found || "error" in found)
    return {
      state: "conflict",
      reason: `the agent's toolhost cannot reach it (${found && "error" in found ? found.error : "no answer"})`,
    };
  if (found.type === "missing") return { state: "copy" };
  if (found.type !== "file") return { state: "conflict", reason: `a ${found.type} is already there` };
  if (found.sha256 === copy.sha256 && found.mode === copy.mode) return { state: "same" };
  return {
    state: "conflict",
    reason:
      found.sha256 === copy.sha256
        ? `already there with mode ${octal(found.mode ?? 0)}, the source has ${octal(copy.mode)}`
        : "a different file is already there",
  };
}

// Hashed as it is read: the plan never holds the whole share in memory.
type LegacyFile = {
  item: number;
  itemPath: string;
  inShare: string;
  inside: string;
  mode: number;
  sizeBytes: number;
  sha256: string;
};

/**
 * The regular files of each mapped item (the item itself, or every file below it),
 * walked by descriptor from the share root. Links, special files and files with several
 * hard links (possibly a host file's) are conflicts; nothing is read through a link.
 */
function legacyFiles(shareDir: string, itemPaths: string[], findings: Findings): LegacyFile[] {
  const share = pinPath(shareDir, true);
  if (share === undefined || !share.stats.isDirectory()) {
    if (share) closeSync(share.fd);
    for (const path of itemPaths)
      findings.conflicts.push(`${join(shareDir, path)}: the mapping names it but it does not exist`);
    return [];
  }
  const files: LegacyFile[] = [];
  try {
    for (const [item, itemPath] of itemPaths.entries()) {
      const segments = itemPath.split("/");
      const parent = pinFolder(share.fd, segments.slice(0, -1));
      if (isRefusal(parent)) {
        const text = refusalConflict(shareDir, itemPath, parent);
        if (parent.problem === "link") refuse(findings, text);
        else findings.conflicts.push(text);
        continue;
      }
      try {
        const walk = { shareDir, findings, found: [] as Omit<LegacyFile, "item" | "itemPath">[] };
        collectLegacy(parent, segments.at(-1) as string, itemPath, "", 0, walk);
        files.push(...walk.found.map((file) => ({ ...file, item, itemPath })));
      } finally {
        closeSync(parent);
      }
    }
  } finally {
    closeSync(share.fd);
  }
  return files;
}

type LegacyWalk = { shareDir: string; findings: Findings; found: Omit<LegacyFile, "item" | "itemPath">[] };

function collectLegacy(
  dirFd: number,
  name: string,
  inShare: string,
  inside: string,
  depth: number,
  walk: LegacyWalk,
): void {
  const shown = join(walk.shareDir, inShare);
  const pinned = pinEntry(dirFd, name);
  if (pinned === undefined) {
    walk.findings.conflicts.push(
      `${shown}: ${depth === 0 ? "the mapping names it but it does not exist" : "disappeared while the plan was made"}`,
    );
    return;
  }
  try {
    if (pinned.stats.isFile()) {
      const bytes = readLegacyBytes(dirFd, name, pinned, shown, walk.findings);
      if (bytes)
        walk.found.push({
          inShare,
          inside,
          mode: pinned.stats.mode & 0o777,
          sizeBytes: bytes.length,
          sha256: sha256(bytes),
        });
    } else if (pinned.stats.isDirectory()) {
      if (depth >= MAX_TREE_DEPTH) {
        walk.findings.conflicts.push(`${shown}: nested deeper than ${MAX_TREE_DEPTH} levels; copy it by hand`);
        return;
      }
      for (const child of listNames(pinned.fd))
        collectLegacy(
          pinned.fd,
          child,
          `${inShare}/${child}`,
          inside === "" ? child : `${inside}/${child}`,
          depth + 1,
          walk,
        );
    } else {
      refuse(walk.findings, linkOrSpecialConflict(shown, pinned));
    }
  } finally {
    closeSync(pinned.fd);
  }
}

function readLegacyBytes(
  dirFd: number,
  name: string,
  pinned: Pinned,
  shown: string,
  findings: Findings,
): Buffer | undefined {
  if (pinned.stats.nlink > 1) {
    refuse(
      findings,
      `${shown}: has ${pinned.stats.nlink} hard links (it may be a file from outside the share); copy it by hand`,
    );
    return undefined;
  }
  try {
    return readPinnedFile(dirFd, name, pinned);
  } catch (error) {
    if (!(error instanceof PinnedReadError)) throw error;
    refuse(findings, `${shown}: ${error.message}; run plan again`);
    return undefined;
  }
}

/**
 * Reads a planned legacy file again for apply, by the same walk (a link put on its way
 * since the plan stops apply). Throws PinnedReadError naming what is wrong.
 */
export function readLegacyFile(shareDir: string, inShare: string): Buffer {
  const share = pinPath(shareDir, true);
  if (share === undefined) throw new PinnedReadError(`${shareDir} does not exist any more`);
  try {
    const segments = inShare.split("/");
    const parent = pinFolder(share.fd, segments.slice(0, -1));
    if (isRefusal(parent)) throw new PinnedReadError(refusalConflict(shareDir, inShare, parent));
    try {
      const name = segments.at(-1) as string;
      const pinned = pinEntry(parent, name);
      const shown = join(shareDir, inShare);
      if (pinned === undefined) throw new PinnedReadError(`${shown}: disappeared since the plan`);
      try {
        if (!pinned.stats.isFile()) throw new PinnedReadError(linkOrSpecialConflict(shown, pinned));
        if (pinned.stats.nlink > 1)
          throw new PinnedReadError(`${shown}: has ${pinned.stats.nlink} hard links since the plan`);
        try {
          return readPinnedFile(parent, name, pinned);
        } catch (error) {
          throw error instanceof PinnedReadError ? new PinnedReadError(`${shown}: ${error.message}`) : error;
        }
      } finally {
        closeSync(pinned.fd);
      }
    } finally {
      closeSync(parent);
    }
  } finally {
    closeSync(share.fd);
  }
}

/** Names the link (its path in the folder), never what it points to. */
function refusalConflict(root: string, path: string, refusal: WalkRefusal): string {
  const shown = join(root, refusal.at);
  if (refusal.problem === "link")
    return `${shown}: a link is neither followed nor copied (it is on the way to ${path}); replace it with a real folder or leave it out of the mapping`;
  if (refusal.problem === "not a folder")
    return `${join(root, path)}: the mapping names it but ${shown} is not a folder`;
  return `${join(root, path)}: the mapping names it but it does not exist`;
}

function linkOrSpecialConflict(shown: string, pinned: Pinned): string {
  return pinned.stats.isSymbolicLink()
    ? `${shown}: a link is neither followed nor copied; copy the file it should be by hand`
    : `${shown}: a special file (FIFO, socket or device) is not copied`;
}

/**
 * Go-era skills in the old skills folder (default: the workspace's base skills): what each
 * becomes, and the copies of the `auto_*` drafts the mapping assigns to an agent. The
 * folder, each skill's folder and its skill.md are pinned without following a link.
 */
function planGoSkills(
  layout: RuntimeLayout,
  loaded: LoadedMapping,
  wanted: Omit<PlannedCopy, "state">[],
  findings: Findings,
): GoSkill[] {
  // resolve() drops a trailing slash, which would make the kernel follow a final link.
  const dir = resolve(loaded.mapping.goSkills?.dir ?? layout.baseSkillsDir);
  const owners = new Map((loaded.mapping.goSkills?.drafts ?? []).map((draft) => [draft.name, draft.agent]));
  const root = pinPath(dir, false);
  if (root === undefined || !root.stats.isDirectory()) {
    if (root?.stats.isSymbolicLink())
      refuse(
        findings,
        `${dir}: the Go-era skills folder is a link, which is not followed; set goSkills.dir to the real folder`,
      );
    else if (owners.size > 0) findings.conflicts.push(`${dir}: the Go-era skills folder does not exist`);
    if (root) closeSync(root.fd);
    return [];
  }
  const skills: GoSkill[] = [];
  const refused = new Set<string>();
  try {
    const folders = readdirSync(`/proc/self/fd/${root.fd}`, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    for (const folder of listNames(root.fd).filter(isGoEraSkillName)) {
      const found = goSkillFile(root.fd, dir, folder, owners.has(folder), findings);
      if (found === "refused") refused.add(folder);
      if (found === "refused" || found === "none") continue;
      const { file, text } = found;
      const becomes = normalizeSkillName(folder);
      const owner = owners.get(folder);
      if (folders.includes(becomes)) {
        skills.push({
          folder,
          file,
          becomes,
          action: `skipped: its name collides with the skill folder ${join(dir, becomes)}`,
        });
      } else if (owner && text !== undefined) {
        const content = Buffer.from(normalizeGoEraSkillText(text, folder), "utf8");
        const dest = join(layout.agentTrees(owner).skillsDir, becomes, "SKILL.md");
        wanted.push({
          agentId: owner,
          source: file,
          dest,
          mode: 0o644,
          sizeBytes: content.length,
          sha256: sha256(content),
          content,
        });
        skills.push({ folder, file, becomes, action: `copied to agent ${owner}'s skills as ${dest}` });
      } else if (isGoEraDraftName(folder)) {
        skills.push({
          folder,
          file,
          becomes,
          action: `stays; loaded as ${becomes} for every agent. To give this draft to its agent, add {"name":"${folder}","agent":"<id>"} to goSkills.drafts`,
        });
      } else {
        skills.push({ folder, file, becomes, action: `stays where it is; loaded as ${becomes} (folder untouched)` });
      }
    }
  } finally {
    closeSync(root.fd);
  }
  for (const name of owners.keys())
    if (!skills.some((skill) => skill.folder === name) && !refused.has(name))
      findings.conflicts.push(`${join(dir, name)}: the mapping names this Go-era draft but it has no skill.md`);
  return skills;
}

/**
 * A Go-era skill's skill.md (or SKILL.md) and, when its draft is being copied, its text.
 * A linked skill folder or a linked skill.md is a conflict, named by its path in the
 * skills folder; nothing is read through it.
 */
function goSkillFile(
  rootFd: number,
  dir: string,
  folder: string,
  read: boolean,
  findings: Findings,
): { file: string; text?: string } | "none" | "refused" {
  const pinned = pinEntry(rootFd, folder);
  if (pinned === undefined) return "none";
  try {
    if (pinned.stats.isSymbolicLink()) {
      refuse(
        findings,
        `${join(dir, folder)}: a linked skill folder is not followed; replace the link with a real folder`,
      );
      return "refused";
    }
    if (!pinned.stats.isDirectory()) return "none";
    for (const name of ["skill.md", "SKILL.md"]) {
      const file = join(dir, folder, name);
      const entry = pinEntry(pinned.fd, name);
      if (entry === undefined) continue;
      try {
        if (!entry.stats.isFile() || entry.stats.nlink > 1) {
          refuse(
            findings,
            entry.stats.isFile()
              ? `${file}: has ${entry.stats.nlink} hard links (it may be a file from outside the skills folder); copy it by hand`
              : linkOrSpecialConflict(file, entry),
          );
          return "refused";
        }
        if (!read) return { file };
        try {
          return { file, text: readPinnedFile(pinned.fd, name, entry).toString("utf8") };
        } catch (error) {
          if (!(error instanceof PinnedReadError)) throw error;
          refuse(findings, `${file}: ${error.message}; run plan again`);
          return "refused";
        }
      } finally {
        closeSync(entry.fd);
      }
    }
    return "none";
  } finally {
    closeSync(pinned.fd);
  }
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
