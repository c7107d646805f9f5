/**
 * Seeds a runtime workspace from the repository: copies what is missing, never
 * overwrites, and reports every file it copied or skipped. Idempotent by construction.
 */
import { copyFileSync, constants, mkdirSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";

export type SeedReport = {
  copied: string[];
  skipped: string[];
  createdDirs: string[];
};

export type SeedSources = {
  /** Repo `configs/` folder (env, agents.json). */
  repoConfigsDir: string;
  /** Repo `workspace/seed/` folder. */
  seedDir: string;
};

/**
 * Phase 1, before the configuration can be read: copies the env and agents files that
 * are missing, so a fresh workspace has the settings it needs (REACT_MAX_STEPS).
 */
export function seedConfigFiles(workspaceDir: string, sources: SeedSources): SeedReport {
  const report: SeedReport = { copied: [], skipped: [], createdDirs: [] };
  const configsDir = join(workspaceDir, "configs");
  ensureDir(configsDir, report);
  for (const name of ["env", "agents.json"])
    copyIfMissing(join(sources.repoConfigsDir, name), join(configsDir, name), report);
  return report;
}

/**
 * Phase 2, with the configuration loaded: copies the seed tree (the seed's `share/`
 * goes to SHARE_DIR) and creates every folder of the layout and of each agent.
 */
export function seedWorkspace(
  layout: RuntimeLayout,
  agents: AgentDefinition[],
  sources: SeedSources,
  report: SeedReport,
): SeedReport {
  for (const entry of readdirSync(sources.seedDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const target = entry.name === "share" ? layout.shareDir : join(layout.workspaceDir, entry.name);
    ensureDir(target, report);
    copyTree(join(sources.seedDir, entry.name), target, report);
  }
  const folders = [
    layout.dataDir,
    layout.botContextDir,
    layout.baseSkillsDir,
    layout.shareDir,
    layout.experienceRoot,
    layout.agentsPrivateRoot,
    layout.workRoot,
  ];
  for (const agent of agents) {
    const trees = layout.agentTrees(agent.id);
    folders.push(trees.workTree, trees.experienceDir, trees.privateDir, trees.skillsDir);
  }
  for (const dir of folders) ensureDir(dir, report);
  return report;
}

export function formatSeedReport(report: SeedReport, workspaceDir: string): string[] {
  const show = (path: string) => relative(workspaceDir, path) || ".";
  return [
    ...report.createdDirs.map((dir) => `created  ${show(dir)}/`),
    ...report.copied.map((file) => `copied   ${show(file)}`),
    ...report.skipped.map((file) => `kept     ${show(file)} (exists, not overwritten)`),
  ];
}

function copyTree(from: string, to: string, report: SeedReport): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      ensureDir(target, report);
      copyTree(source, target, report);
    } else if (entry.isFile()) {
      copyIfMissing(source, target, report);
    }
  }
}

function copyIfMissing(source: string, target: string, report: SeedReport): void {
  try {
    // COPYFILE_EXCL makes "only if missing" atomic: a file created meanwhile is kept.
    copyFileSync(source, target, constants.COPYFILE_EXCL);
    report.copied.push(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    report.skipped.push(target);
  }
}

function ensureDir(dir: string, report: SeedReport): void {
  if (isDirectory(dir)) return;
  mkdirSync(dir, { recursive: true });
  report.createdDirs.push(dir);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
