/**
 * Paths of the runtime workspace (ARCHITECTURE section 3), computed once from the
 * configuration. Every module asks this object for a path instead of joining its own.
 */
import { join } from "node:path";
import type { Config } from "./load-config.js";
import { resolveInWorkspace } from "./load-config.js";

/** Default name of the link in every chat folder that points to the agent's experience library (LIBRARY_LINK_NAME). */
export const EXPERIENCE_LINK_NAME = "团队经验";

export type AgentTrees = {
  /** Root of the agent's per-chat working folders. */
  workTree: string;
  experienceDir: string;
  privateDir: string;
  skillsDir: string;
};

export type RuntimeLayout = {
  workspaceDir: string;
  configsDir: string;
  envFile: string;
  agentsFile: string;
  botContextDir: string;
  baseSkillsDir: string;
  dataDir: string;
  databaseFile: string;
  /** What the store opens: DATABASE_URL when set, else the SQLite file. */
  databaseTarget: string;
  /** Where logs go while chatting on a terminal (LOG_DIR). */
  logDir: string;
  shareDir: string;
  experienceRoot: string;
  agentsPrivateRoot: string;
  workRoot: string;
  /** The link in every session folder to the agent's experience library (LIBRARY_LINK_NAME). */
  libraryLinkName: string;
  /** EGRESS_HOSTS resolved against the workspace (the egress proxy's trusted name mapping), when set. */
  egressHostsFile: string | undefined;
  /** ALLOWED_DIRS resolved against the workspace, without duplicates. */
  extraAllowedDirs: string[];
  /** ALLOWED_COMMANDS as the operator set it, without duplicates: nothing is ever added behind their back. */
  allowedCommands: string[];
  agentTrees(agentId: string): AgentTrees;
};

export function createRuntimeLayout(workspaceDir: string, config: Config): RuntimeLayout {
  const shareDir = resolveInWorkspace(workspaceDir, config.SHARE_DIR);
  const workRoot = resolveInWorkspace(workspaceDir, config.WORK_DIR);
  const experienceRoot = join(shareDir, "agent-experience");
  const agentsPrivateRoot = join(shareDir, "agents");
  const dataDir = join(workspaceDir, "data");
  return {
    workspaceDir,
    configsDir: join(workspaceDir, "configs"),
    envFile: join(workspaceDir, "configs", "env"),
    agentsFile: join(workspaceDir, "configs", "agents.json"),
    botContextDir: join(workspaceDir, "bot_context"),
    baseSkillsDir: join(workspaceDir, "skills"),
    dataDir,
    databaseFile: join(dataDir, "laoding.db"),
    databaseTarget: config.DATABASE_URL ?? join(dataDir, "laoding.db"),
    logDir: resolveInWorkspace(workspaceDir, config.LOG_DIR),
    shareDir,
    experienceRoot,
    agentsPrivateRoot,
    workRoot,
    libraryLinkName: config.LIBRARY_LINK_NAME,
    egressHostsFile:
      config.EGRESS_HOSTS === undefined ? undefined : resolveInWorkspace(workspaceDir, config.EGRESS_HOSTS),
    extraAllowedDirs: unique(config.ALLOWED_DIRS.map((dir) => resolveInWorkspace(workspaceDir, dir))),
    allowedCommands: unique(config.ALLOWED_COMMANDS),
    agentTrees(agentId) {
      const privateDir = join(agentsPrivateRoot, agentId);
      return {
        workTree: join(workRoot, agentId),
        experienceDir: join(experienceRoot, agentId),
        privateDir,
        skillsDir: agentSkillsDir(workspaceDir, config.AUTO_SKILL_DIR, agentId) ?? join(privateDir, "skills"),
      };
    },
  };
}

/** AUTO_SKILL_DIR is per agent: `{agent}` is replaced, otherwise the id is appended. */
function agentSkillsDir(workspaceDir: string, setting: string | undefined, agentId: string): string | undefined {
  if (!setting) return undefined;
  return setting.includes("{agent}")
    ? resolveInWorkspace(workspaceDir, setting.replaceAll("{agent}", agentId))
    : join(resolveInWorkspace(workspaceDir, setting), agentId);
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
