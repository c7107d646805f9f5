/**
 * The operator's maintenance of agents' trees (`laoding library list|index|rebuild`, the
 * admin API, `laoding share`) runs through each agent's own toolhost child, as the running
 * bot's refreshes do: the CLI or admin server, often run as root, never opens a path
 * inside an agent's tree itself (DECISIONS.md, boundary). These children are the
 * operator's: the library is bound even when switched off for chats (an operator tidies
 * before enabling) and they serve the operator.* tools.
 */
import { join } from "node:path";
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { AgentTrees, RuntimeLayout } from "../config/runtime-layout.js";
import { INDEX_FILE } from "../knowledge/library/library-doc.js";
import type { Logger } from "../log/logger.js";
import type { Store } from "../store/store.js";
import { operatorFiles, type OperatorFiles } from "./operator-files.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";
import { prepareToolhostLaunches, type LaunchReach, type ToolhostLaunches } from "./toolhost-launch.js";
import { createToolhostPool } from "./toolhost-pool-factory.js";

export type LibraryMaintenance = {
  /** library.index: refresh (or rebuild) and the one-line report. */
  refresh(rebuild: boolean): Promise<string>;
  /** The whole INDEX.md text, refreshed first. */
  readIndex(): Promise<string>;
  /** Typed file operations with the agent's authority. */
  files: OperatorFiles;
  trees: AgentTrees;
};

export type MaintenancePool = {
  agent(agentId: string): LibraryMaintenance;
  /** The agent's maintenance child itself (`laoding mcp test`): started on first use, with the agent's MCP servers when `reach` was given. */
  client(agentId: string): ToolhostClient;
  /** How the children run ("none" when any agent runs without the OS sandbox). */
  sandbox: ToolhostLaunches["mode"];
  close(): Promise<void>;
};

export type MaintenanceOptions = {
  config: Config;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  store: Store;
  logger: Logger;
  cliEntry: string;
  onWarning: (warning: string) => void;
  /** Where the children's own log lines go (the log file while a one-shot command prints its result); default the bot's stderr. */
  childStderr?: () => number;
  /** The agents' egress and MCP servers (runtime/agent-reach.ts); without it the children reach no network and run no MCP server. */
  reach?: LaunchReach;
};

export function openMaintenancePool(options: MaintenanceOptions): MaintenancePool {
  const launches = prepareToolhostLaunches({
    config: options.config,
    layout: options.layout,
    agents: options.agents,
    cliEntry: options.cliEntry,
    libraryEnabled: () => true,
    operatorTools: true,
    ...(options.reach ? { reach: options.reach } : {}),
  });
  for (const warning of launches.warnings) options.onWarning(warning);
  const pool = createToolhostPool({
    config: options.config,
    launches,
    store: options.store,
    logger: options.logger,
    ...(options.childStderr ? { childStderr: options.childStderr } : {}),
  });
  const known = new Map<string, LibraryMaintenance>();
  return {
    sandbox: launches.mode,
    client(agentId) {
      if (!launches.agents.has(agentId)) throw new Error(`no agent "${agentId}"`);
      return pool.client(agentId);
    },
    agent(agentId) {
      const existing = known.get(agentId);
      if (existing) return existing;
      if (!launches.agents.has(agentId)) throw new Error(`no agent "${agentId}"`);
      const client = pool.client(agentId);
      const files = operatorFiles((call) => client.callTool(call));
      const trees = options.layout.agentTrees(agentId);
      const indexPath = join(trees.experienceDir, INDEX_FILE);
      const maintenance: LibraryMaintenance = {
        files,
        trees,
        refresh: (rebuild) => files.call("library.index", rebuild ? { rebuild: true } : {}),
        async readIndex() {
          await maintenance.refresh(false);
          return (await files.readFile(indexPath)).toString("utf8");
        },
      };
      known.set(agentId, maintenance);
      return maintenance;
    },
    close: () => pool.stopAll(),
  };
}

/** One agent's maintenance (the `laoding library` commands). */
export function openLibraryMaintenance(
  options: Omit<MaintenanceOptions, "agents"> & { agent: AgentDefinition },
): LibraryMaintenance & { close(): Promise<void> } {
  const pool = openMaintenancePool({ ...options, agents: [options.agent] });
  return { ...pool.agent(options.agent.id), close: () => pool.close() };
}
