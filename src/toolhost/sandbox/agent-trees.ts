/**
 * File modes and owners that make the kernel keep agents apart when the bot runs as
 * root (DECISIONS.md): the workspace root, the work root and share/ are 0711 (agents pass
 * through, cannot list), base skills 0755, data/, configs/ and bot_context/ 0700, and
 * each agent tree 0700 owned by that agent's uid.
 *
 * This runs as root over folders an agent writes, possibly while that agent's commands
 * still run (a re-plan when its library is switched, `laoding library`, a command left
 * over from an earlier run). A walk by path would let the agent swap a folder for a link
 * between a check and the act (renameat2 RENAME_EXCHANGE), and root would then chown or
 * chmod a host path. So the walk never acts on a path: every folder is opened with
 * O_NOFOLLOW and pinned by its descriptor, its entries are reached through
 * /proc/self/fd/<fd>/<name> (so only the last name is looked up, never followed), and
 * owners and modes are changed on descriptors. A tree that is a link or not a folder is
 * moved aside (unless an operator's root-owned folder holds it) and made anew; files with
 * several hard links are left alone (they could be links to host files, made by an older
 * version that ran the shell as root).
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lchownSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  type Stats,
} from "node:fs";
import { basename, dirname } from "node:path";
import {
  DIRECTORY_FLAGS,
  FILE_FLAGS,
  fdEntry,
  lstatOrUndefined,
  openOrUndefined,
} from "../../workspace/descriptor-walk.js";

export type TreeLayout = {
  workspaceDir: string;
  workRoot: string;
  shareDir: string;
  experienceRoot: string;
  agentsPrivateRoot: string;
  baseSkillsDir: string;
  /** Folders only the bot may enter (data/, configs/, bot_context/). */
  privateDirs: string[];
};

export type AgentTreeOwner = { agentId: string; uid: number; trees: string[] };

export type SecureReport = { warnings: string[] };

/** Deeper than this, a tree is left as it is (and said): a descriptor is held per level. */
export const MAX_TREE_DEPTH = 128;

export function secureWorkspace(
  layout: TreeLayout,
  owners: AgentTreeOwner[],
  now: () => Date = () => new Date(),
): SecureReport {
  const warnings: string[] = [];
  for (const dir of [
    layout.workspaceDir,
    layout.workRoot,
    layout.shareDir,
    layout.experienceRoot,
    layout.agentsPrivateRoot,
  ])
    setMode(dir, 0o711, true);
  setMode(layout.baseSkillsDir, 0o755, false);
  for (const dir of layout.privateDirs) setMode(dir, 0o700, false);
  for (const owner of owners) {
    for (const tree of owner.trees) {
      const said = (text: string) => warnings.push(`agent ${owner.agentId}: ${text}`);
      const treeFd = openTree(tree, now, said);
      try {
        fchownSync(treeFd, owner.uid, owner.uid);
        fchmodSync(treeFd, 0o700);
        const walk = { uid: owner.uid, hardLinked: [] as string[], tooDeep: [] as string[] };
        giveEntries(treeFd, tree, 1, walk);
        if (walk.hardLinked.length > 0)
          said(
            `left ${walk.hardLinked.length} file(s) with several hard links owned as they were (first: ${walk.hardLinked[0]})`,
          );
        if (walk.tooDeep.length > 0)
          said(
            `left ${walk.tooDeep.length} folder(s) nested deeper than ${MAX_TREE_DEPTH} levels owned as they were (first: ${walk.tooDeep[0]})`,
          );
      } finally {
        closeSync(treeFd);
      }
    }
  }
  return { warnings };
}

/** The bot's own folders: their ancestors are the operator's, so a link here is the operator's layout. */
function setMode(dir: string, mode: number, create: boolean): void {
  if (create) mkdirSync(dir, { recursive: true });
  let fd: number;
  try {
    fd = openSync(dir, DIRECTORY_FLAGS);
  } catch {
    // Missing, or a link: its target's mode is the operator's choice.
    return;
  }
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a tree's folder without following a link in its last name. A tree may sit in a
 * folder the agent writes (its own skills in its private area), so a link or a file
 * there is the agent's doing unless that folder is root's alone: then it is the
 * operator's layout and is followed.
 */
function openTree(tree: string, now: () => Date, said: (text: string) => void): number {
  mkdirSync(dirname(tree), { recursive: true });
  const parentFd = openSync(dirname(tree), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    const name = basename(tree);
    const entry = fdEntry(parentFd, name);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const stats = lstatOrUndefined(entry);
      if (stats === undefined) {
        tryMkdir(entry);
        continue;
      }
      if (stats.isSymbolicLink() && operatorOwned(fstatSync(parentFd)))
        return openSync(entry, constants.O_RDONLY | constants.O_DIRECTORY);
      if (!stats.isDirectory()) {
        const aside = `${name}.moved-${now().toISOString().replace(/[:.]/g, "-")}`;
        const target = stats.isSymbolicLink() ? ` (a link to ${readlinkOrUnknown(entry)})` : "";
        renameSync(entry, fdEntry(parentFd, aside));
        said(`${tree} was not a folder${target}; moved it aside to ${aside} and made a new folder`);
        continue;
      }
      try {
        return openSync(entry, DIRECTORY_FLAGS);
      } catch (error) {
        // Swapped between lstat and open: look again.
        if (!["ELOOP", "ENOTDIR", "ENOENT"].includes((error as NodeJS.ErrnoException).code ?? "")) throw error;
      }
    }
    throw new Error(
      `${tree} keeps changing while the bot sets its owner; stop whatever is renaming it and start again`,
    );
  } finally {
    closeSync(parentFd);
  }
}

/** Root's alone: owned by root and writable by no one else. */
function operatorOwned(stats: Stats): boolean {
  return stats.uid === 0 && (stats.mode & 0o022) === 0;
}

type Walk = { uid: number; hardLinked: string[]; tooDeep: string[] };

/** Gives `walk.uid` every entry below the pinned folder `dirFd` that it does not own yet. */
function giveEntries(dirFd: number, shownPath: string, depth: number, walk: Walk): void {
  let names: string[];
  try {
    names = readdirSync(`/proc/self/fd/${dirFd}`);
  } catch {
    return;
  }
  for (const name of names) {
    const entry = fdEntry(dirFd, name);
    const stats = lstatOrUndefined(entry);
    if (stats === undefined) continue;
    const owned = stats.uid === walk.uid && stats.gid === walk.uid;
    if (stats.isDirectory()) {
      if (depth >= MAX_TREE_DEPTH) {
        walk.tooDeep.push(`${shownPath}/${name}`);
        continue;
      }
      const fd = openOrUndefined(entry, DIRECTORY_FLAGS);
      if (fd === undefined) continue;
      try {
        if (!owned) fchownSync(fd, walk.uid, walk.uid);
        giveEntries(fd, `${shownPath}/${name}`, depth + 1, walk);
      } finally {
        closeSync(fd);
      }
    } else if (owned) {
      continue;
    } else if (stats.isSymbolicLink()) {
      // lchown changes the link itself; the last name of `entry` is never followed.
      lchownSync(entry, walk.uid, walk.uid);
    } else if (stats.isFile()) {
      giveFile(entry, `${shownPath}/${name}`, walk);
    }
    // FIFOs, sockets and devices keep their owners: an agent cannot make devices, and
    // opening a device or a FIFO as root has side effects.
  }
}

function giveFile(entry: string, shownPath: string, walk: Walk): void {
  const fd = openOrUndefined(entry, FILE_FLAGS);
  if (fd === undefined) return;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return;
    if (stats.nlink > 1) {
      walk.hardLinked.push(shownPath);
      return;
    }
    fchownSync(fd, walk.uid, walk.uid);
  } finally {
    closeSync(fd);
  }
}

function tryMkdir(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

function readlinkOrUnknown(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}
