/**
 * File modes and owners that make the kernel keep agents apart when the bot runs as
 * root (DECISIONS.md): the workspace root, the work root and share/ are 0711 (agents pass
 * through, cannot list), base skills 0755, data/, configs/ and bot_context/ 0700, and
 * each agent tree 0700 owned by that agent's uid. Run once at start-up, before any of
 * the agent's processes exist, so nothing can swap a folder while it walks: it never
 * follows a link (lchown on the link itself, no descent), and it never changes a file
 * with several hard links (it could be a link to a host file, made by an older version
 * that ran the shell as root).
 */
import { chmodSync, lchownSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

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

export function secureWorkspace(layout: TreeLayout, owners: AgentTreeOwner[]): SecureReport {
  const warnings: string[] = [];
  for (const dir of [layout.workspaceDir, layout.workRoot, layout.shareDir, layout.experienceRoot, layout.agentsPrivateRoot]) setMode(dir, 0o711, true);
  setMode(layout.baseSkillsDir, 0o755, false);
  for (const dir of layout.privateDirs) setMode(dir, 0o700, false);
  for (const owner of owners) {
    for (const tree of owner.trees) {
      mkdirSync(tree, { recursive: true, mode: 0o700 });
      const skipped = giveTree(tree, owner.uid);
      chmodSync(tree, 0o700);
      if (skipped.length > 0) warnings.push(`agent ${owner.agentId}: left ${skipped.length} file(s) with several hard links owned as they were (first: ${skipped[0]})`);
    }
  }
  return { warnings };
}

function setMode(dir: string, mode: number, create: boolean): void {
  if (create) mkdirSync(dir, { recursive: true });
  let stats;
  try {
    stats = lstatSync(dir);
  } catch {
    return;
  }
  // A link here would be the operator's choice of layout; its target's mode is theirs.
  if (stats.isDirectory()) chmodSync(dir, mode);
}

/** Gives `uid` every entry of a tree it does not own yet; returns what it left alone. */
function giveTree(root: string, uid: number): string[] {
  const skipped: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const path = stack.pop() as string;
    let stats;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (stats.isFile() && stats.nlink > 1) {
      skipped.push(path);
      continue;
    }
    if (stats.uid !== uid || stats.gid !== uid) lchownSync(path, uid, uid);
    if (stats.isDirectory()) for (const name of readdirSync(path)) stack.push(join(path, name));
  }
  return skipped;
}
