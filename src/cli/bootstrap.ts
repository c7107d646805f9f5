/**
 * The steps every long-running command shares: seed the workspace, load and validate
 * the configuration and agents, and build the logger. Side effects stay here, at the edge.
 */
import { join } from "node:path";
import { declaredCredentialNames, personaFile, readAgentsFile, type AgentDefinition } from "../config/agents.js";
import { describeUnknownKey, loadConfig, resolveWorkspaceDir, type LoadedConfig } from "../config/load-config.js";
import { checkWorkspaceLocation } from "../config/workspace-location.js";
import { createRuntimeLayout, type RuntimeLayout } from "../config/runtime-layout.js";
import { checkShareLayout } from "../config/share-layout-check.js";
import { SECRET_VARIABLES } from "../config/variables.js";
import { openLogFile, type LogFile } from "../log/log-file.js";
import { createLogger, type Logger } from "../log/logger.js";
import { seedConfigFiles, seedWorkspace, type SeedReport } from "../workspace/seed-workspace.js";
import type { CliContext } from "./cli-context.js";

export type Boot = {
  loaded: LoadedConfig;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  logger: Logger;
  seedReport?: SeedReport;
  /** Set when logs go to a file (chatting on a terminal). */
  logFile?: LogFile;
};

export type BootOptions = {
  /** From `--workspace`; undefined means AGENT_WORKSPACE_DIR or its default. */
  workspaceDir?: string | undefined;
  /** Seed missing workspace files first (init, start, chat); the toolhost child never seeds. */
  seed: boolean;
  logBase?: Record<string, unknown>;
  /** Logs to a file under the workspace (a person is chatting on this terminal). */
  logToFile?: (loaded: LoadedConfig, agents: AgentDefinition[]) => boolean;
};

const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;
const LOG_FILES_KEPT = 3;

export function bootstrap(context: CliContext, options: BootOptions): Boot {
  const configOptions = {
    env: context.env,
    repoRoot: context.repoRoot,
    cwd: context.cwd,
    ...(options.workspaceDir ? { workspaceDir: options.workspaceDir } : {}),
  };
  const sources = { repoConfigsDir: join(context.repoRoot, "configs"), seedDir: join(context.repoRoot, "workspace", "seed") };
  const workspaceDir = resolveWorkspaceDir(configOptions);
  checkWorkspaceLocation(workspaceDir);
  const seedReport = options.seed ? seedConfigFiles(workspaceDir, sources) : undefined;
  const loaded = loadConfig(configOptions);
  const layout = createRuntimeLayout(loaded.workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  checkShareLayout(layout, agents);
  if (seedReport) {
    seedWorkspace(layout, agents, sources, seedReport);
    // A persona that leads out of bot_context/ stops start-up, naming the agent.
    for (const agent of agents) personaFile(layout.botContextDir, agent);
  }
  // Bot credentials that agents.json names are ours too: not typos, and secrets.
  const declared = new Set(declaredCredentialNames(agents));
  const declaredSecrets = [...declared].flatMap((name) => loaded.declaredValue(name) ?? []);
  const logFile = options.logToFile?.(loaded, agents) ? openLogFile({ dir: layout.logDir, maxBytes: LOG_FILE_MAX_BYTES, keep: LOG_FILES_KEPT }) : undefined;
  const logger = createLogger({
    level: loaded.config.LOG_LEVEL,
    secrets: [
      ...SECRET_VARIABLES.flatMap((key) => {
        const value = loaded.config[key];
        return typeof value === "string" ? [value] : [];
      }),
      ...declaredSecrets,
    ],
    ...(options.logBase ? { base: options.logBase } : {}),
    ...(logFile ? { file: { sink: logFile, notices: context.stderr } } : {}),
  });
  for (const { key, path } of loaded.unknownKeys.filter(({ key }) => !declared.has(key))) {
    const warning = describeUnknownKey(key, path);
    logger.warn({ key, path }, warning);
    // Said on the console too, whatever the log level: a typo silently ignored costs hours.
    context.stderr.write(`warning: ${warning}\n`);
  }
  return { loaded, layout, agents, logger, ...(seedReport ? { seedReport } : {}), ...(logFile ? { logFile } : {}) };
}

