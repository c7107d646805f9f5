/**
 * The steps every long-running command shares: seed the workspace, load and validate
 * the configuration and agents, and build the logger. Side effects stay here, at the edge.
 */
import { join } from "node:path";
import { readAgentsFile, type AgentDefinition } from "../config/agents.js";
import { loadConfig, resolveWorkspaceDir, type LoadedConfig } from "../config/load-config.js";
import { createRuntimeLayout, type RuntimeLayout } from "../config/runtime-layout.js";
import { checkShareLayout } from "../config/share-layout-check.js";
import { SECRET_VARIABLES } from "../config/variables.js";
import { createLogger, type Logger } from "../log/logger.js";
import { seedConfigFiles, seedWorkspace, type SeedReport } from "../workspace/seed-workspace.js";
import type { CliContext } from "./cli-context.js";

export type Boot = {
  loaded: LoadedConfig;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  logger: Logger;
  seedReport?: SeedReport;
};

export type BootOptions = {
  /** From `--workspace`; undefined means AGENT_WORKSPACE_DIR or its default. */
  workspaceDir?: string | undefined;
  /** Seed missing workspace files first (init, start, chat); the toolhost child never seeds. */
  seed: boolean;
  logBase?: Record<string, unknown>;
};

export function bootstrap(context: CliContext, options: BootOptions): Boot {
  const configOptions = {
    env: context.env,
    repoRoot: context.repoRoot,
    cwd: context.cwd,
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
  };
  const sources = { repoConfigsDir: join(context.repoRoot, "configs"), seedDir: join(context.repoRoot, "workspace", "seed") };
  const seedReport = options.seed ? seedConfigFiles(resolveWorkspaceDir(configOptions), sources) : undefined;
  const loaded = loadConfig(configOptions);
  const layout = createRuntimeLayout(loaded.workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  checkShareLayout(layout, agents);
  if (seedReport) seedWorkspace(layout, agents, sources, seedReport);
  const logger = createLogger({
    level: loaded.config.LOG_LEVEL,
    secrets: SECRET_VARIABLES.flatMap((key) => {
      const value = loaded.config[key];
      return typeof value === "string" ? [value] : [];
    }),
    ...(options.logBase ? { base: options.logBase } : {}),
  });
  for (const { key, path } of loaded.unknownKeys) {
    logger.warn({ key, path }, "unknown variable in env file (typo?); it is ignored");
  }
  return { loaded, layout, agents, logger, ...(seedReport ? { seedReport } : {}) };
}

