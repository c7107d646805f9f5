/**
 * Runs every check in order and returns one result per line of the report. Checks that
 * need an earlier one (the model needs a valid configuration) are skipped, saying which;
 * a check that throws becomes a failed line, so one broken check never hides the rest.
 * Every collaborator with a side effect comes in through `DoctorParts`.
 */
import type { StatsFs } from "node:fs";
import { join } from "node:path";
import { declaredCredentialNames, type AgentDefinition } from "../config/agents.js";
import { loadConfig, resolveWorkspaceDir, type LoadConfigOptions, type LoadedConfig } from "../config/load-config.js";
import { createRuntimeLayout } from "../config/runtime-layout.js";
import type { ChatModel } from "../llm/chat-model.js";
import type { OpenAIChatModelOptions } from "../llm/openai-chat-model.js";
import type { Logger } from "../log/logger.js";
import { selectChannels } from "../runtime/chat-bots.js";
import type { LaunchSetup, ToolhostLaunches } from "../runtime/toolhost-launch.js";
import { describeDatabaseUrl } from "../store/sql/database-url.js";
import { checkAdmin } from "./admin-check.js";
import { checkAgentsFile } from "./agents-check.js";
import { checkChatBots } from "./chat-bots-check.js";
import { failedFromError, skipped, type CheckResult } from "./check-result.js";
import { checkConfiguration } from "./configuration-check.js";
import { checkDatabase, checkPostgresDatabase } from "./database-check.js";
import { checkDisk } from "./disk-check.js";
import { checkLayout } from "./layout-check.js";
import { checkModel } from "./model-check.js";
import { checkNodeVersion } from "./node-version-check.js";
import { checkSandbox } from "./sandbox-check.js";
import { checkReach } from "./reach-check.js";
import { checkSkills } from "./skills-check.js";
import { checkWorkspace } from "./workspace-check.js";

export type DoctorParts = {
  config: LoadConfigOptions;
  node: { running: string; required: string | undefined };
  isRoot: boolean;
  cliEntry: string;
  exists: (path: string) => boolean;
  readText: (path: string) => string | undefined;
  statfs: (path: string) => Pick<StatsFs, "bavail" | "bsize" | "ffree" | "files">;
  prepareLaunches: (setup: LaunchSetup) => ToolhostLaunches;
  createModel: (options: OpenAIChatModelOptions) => ChatModel;
  /** A logger that writes nothing the operator did not ask for (the chat platforms want one). */
  logger: Logger;
  /** Said before slow checks (the model, each bot login). */
  progress: (text: string) => void;
};

export type DoctorRun = { results: CheckResult[]; loaded?: LoadedConfig; agents?: AgentDefinition[] };

export async function runDoctor(parts: DoctorParts): Promise<DoctorRun> {
  const results: CheckResult[] = [];
  const add = (...found: (CheckResult | CheckResult[])[]) => results.push(...found.flat());
  add(checkNodeVersion(parts.node.running, parts.node.required));

  let workspaceDir: string;
  try {
    workspaceDir = resolveWorkspaceDir(parts.config);
  } catch (error) {
    add(
      failedFromError(
        "configuration",
        "configuration",
        error,
        "Fix the configuration (configs/env.example documents every variable)",
      ),
    );
    return { results };
  }
  const workspace = checkWorkspace(workspaceDir, parts.exists);
  add(workspace);
  // The runtime layout needs a valid configuration; these two paths never depend on it.
  const agentsFile = join(workspaceDir, "configs", "agents.json");
  const agentsCheck = workspace.ok
    ? checkAgentsFile({
        path: agentsFile,
        read: () => parts.readText(agentsFile),
        botContextDir: join(workspaceDir, "bot_context"),
        workspaceDir,
      })
    : undefined;
  const agents = agentsCheck?.agents;
  const configuration = checkConfiguration(
    () => loadConfig(parts.config),
    workspaceDir,
    new Set(agents ? declaredCredentialNames(agents) : []),
  );
  add(...configuration.results);
  const noWorkspace = "the workspace is not ready, see above";
  add(...(agentsCheck?.results ?? [skipped("agents", "agents.json", noWorkspace)]));

  const loaded = configuration.loaded;
  const noConfig = "the configuration is invalid, see above";
  const noAgents = agentsCheck === undefined ? noWorkspace : "agents.json is invalid, see above";
  const envFile = join(workspaceDir, "configs", "env");
  if (!loaded) {
    for (const [id, title] of [
      ["share-layout", "share layout"],
      ["sandbox", "sandbox"],
      ["skills", "skills"],
      ["database", "database"],
      ["admin", "admin API"],
      ["model", "model"],
      ["chat-bots", "chat bots"],
    ] as const)
      add(skipped(id, title, noConfig));
    if (workspace.ok) add(guard("disk", "disk space", () => checkDisk(workspaceDir, parts.statfs)));
    return { results };
  }
  const layout = createRuntimeLayout(loaded.workspaceDir, loaded.config);
  const needsAgents = (id: string, title: string, run: (agents: AgentDefinition[]) => CheckResult | CheckResult[]) =>
    add(agents ? guard(id, title, () => run(agents)) : skipped(id, title, noAgents));
  const layoutResult = agents ? checkLayout(layout, agents) : skipped("share-layout", "share layout", noAgents);
  add(layoutResult);
  if (layoutResult.ok) {
    needsAgents("sandbox", "sandbox", (found) =>
      checkSandbox({
        config: loaded.config,
        layout,
        agents: found,
        cliEntry: parts.cliEntry,
        isRoot: parts.isRoot,
        localOperatorOnly: sameAsStart(loaded, found),
        prepare: parts.prepareLaunches,
      }),
    );
  } else add(skipped("sandbox", "sandbox", agents ? "the share layout is refused, see above" : noAgents));
  needsAgents("skills", "skills", (found) => checkSkills(layout, found, parts.logger));
  if (agents) add(await guardAsync("reach", "network and MCP servers", () => checkReach(loaded, layout, agents)));
  else add(skipped("reach", "network and MCP servers", noAgents));
  const databaseUrl = loaded.config.DATABASE_URL;
  if (databaseUrl !== undefined) {
    // PostgreSQL does not live in the workspace: checked whatever the workspace's state.
    parts.progress(`connecting to PostgreSQL at ${describeDatabaseUrl(databaseUrl)}`);
    add(await guardAsync("database", "database", () => checkPostgresDatabase(databaseUrl)));
  }
  if (workspace.ok) {
    if (databaseUrl === undefined)
      add(guard("database", "database", () => checkDatabase(layout.databaseFile, parts.exists)));
    add(guard("disk", "disk space", () => checkDisk(layout.workspaceDir, parts.statfs)));
  } else
    for (const [id, title] of [
      ...(databaseUrl === undefined ? [["database", "database"] as const] : []),
      ["disk", "disk space"] as const,
    ])
      add(skipped(id, title, noWorkspace));
  add(checkAdmin(loaded.config, envFile));
  if (loaded.config.LLM_BASE_URL)
    parts.progress(`asking the model at ${new URL(loaded.config.LLM_BASE_URL).host} for one token`);
  add(
    await guardAsync("model", "model", () =>
      checkModel({ config: loaded.config, envFile, createModel: parts.createModel }),
    ),
  );
  if (agents)
    add(
      await guardAsync("chat-bots", "chat bots", () =>
        checkChatBots({ loaded, agents, logger: parts.logger, progress: parts.progress }),
      ),
    );
  else add(skipped("chat-bots", "chat bots", noAgents));
  return { results, loaded, ...(agents ? { agents } : {}) };
}

/**
 * `laoding start` lets only the console run without namespaces where they cannot be
 * made. Bot credentials that cannot be read are the chat bots' line; the sandbox is
 * then judged as for chat channels, the stricter case.
 */
function sameAsStart(loaded: LoadedConfig, agents: AgentDefinition[]): boolean {
  try {
    const channels = selectChannels(loaded, agents);
    return channels.length === 1 && channels[0] === "console";
  } catch {
    return false;
  }
}

const UNEXPECTED_FIX = "This is a fault in the doctor or an unusual host: run with LOG_LEVEL=debug and report it";

function guard(id: string, title: string, run: () => CheckResult | CheckResult[]): CheckResult | CheckResult[] {
  try {
    return run();
  } catch (error) {
    return failedFromError(id, title, error, UNEXPECTED_FIX);
  }
}

async function guardAsync(
  id: string,
  title: string,
  run: () => Promise<CheckResult | CheckResult[]>,
): Promise<CheckResult[]> {
  try {
    return [await run()].flat();
  } catch (error) {
    return [failedFromError(id, title, error, UNEXPECTED_FIX)];
  }
}
