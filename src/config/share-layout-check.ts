/**
 * Start-up refuses layouts that would break per-agent isolation (seed design 001): the
 * share root may neither lie inside a working tree or an agent's tree nor contain one
 * (`SHARE_DIR=workspace/main/share` would put every library inside agent main's working
 * tree), and an extra folder (ALLOWED_DIRS, an agent's writableDirs) may not reach into
 * the share root, the working trees or the bot's private folders. Paths are compared by
 * segments after resolving every existing segment's links.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import type { AgentDefinition } from "./agents.js";
import { ConfigError } from "./config-error.js";
import { resolveInWorkspace } from "./load-config.js";
import type { RuntimeLayout } from "./runtime-layout.js";

type Named = { label: string; path: string };

export function checkShareLayout(layout: RuntimeLayout, agents: AgentDefinition[]): void {
  const share = { label: "SHARE_DIR", path: layout.shareDir };
  const workTrees: Named[] = [
    { label: "WORK_DIR", path: layout.workRoot },
    ...agents.map((agent) => ({
      label: `agent ${agent.id}'s working tree`,
      path: layout.agentTrees(agent.id).workTree,
    })),
  ];
  // An own-skills folder outside the share (AUTO_SKILL_DIR) is an agent tree too.
  const skillTrees = agents
    .map((agent) => ({
      label: `agent ${agent.id}'s skills folder (AUTO_SKILL_DIR)`,
      path: layout.agentTrees(agent.id).skillsDir,
    }))
    .filter((tree) => !within(layout.shareDir, tree.path));
  for (const tree of [...workTrees, ...skillTrees]) {
    if (within(tree.path, share.path)) refuse(`${share.label} ${share.path} lies inside ${tree.label} ${tree.path}`);
    if (within(share.path, tree.path)) refuse(`${share.label} ${share.path} contains ${tree.label} ${tree.path}`);
  }
  const guarded: Named[] = [
    share,
    ...workTrees,
    ...skillTrees,
    { label: "the data folder", path: layout.dataDir },
    { label: "the configs folder", path: layout.configsDir },
  ];
  const extras: Named[] = [
    ...layout.extraAllowedDirs.map((path) => ({ label: "ALLOWED_DIRS entry", path })),
    ...agents.flatMap((agent) =>
      agentWritableDirs(layout, agent).map((path) => ({ label: `agent ${agent.id}'s writableDirs entry`, path })),
    ),
  ];
  for (const extra of extras) {
    for (const tree of guarded) {
      if (within(extra.path, tree.path) || within(tree.path, extra.path))
        refuse(`${extra.label} ${extra.path} overlaps ${tree.label} ${tree.path}`);
    }
  }
}

/** An agent's extra writable folders from agents.json, resolved against the workspace. */
export function agentWritableDirs(layout: RuntimeLayout, agent: AgentDefinition): string[] {
  return [...new Set(agent.writableDirs.map((dir) => resolveInWorkspace(layout.workspaceDir, dir)))];
}

function refuse(problem: string): never {
  throw new ConfigError(`${problem}: that would let one agent reach another's files`, {
    hint: "Keep SHARE_DIR, WORK_DIR and extra folders apart (the defaults share/ and workspace/ are), then start again",
  });
}

/** True when `inner` is `outer` or lies below it, by segments, after resolving links. */
function within(outer: string, inner: string): boolean {
  const a = real(outer);
  const b = real(inner);
  return a === b || b.startsWith(a.endsWith(sep) ? a : `${a}${sep}`);
}

/** The real path of the longest existing prefix, joined with the missing rest. */
function real(path: string): string {
  const missing: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch {
      if (dirname(current) === current) return resolve(path);
      missing.push(basename(current));
    }
  }
}
