/**
 * Every secret value a loaded configuration holds, for the redactor: the variables marked
 * `secret` in the table (bot tokens, app secrets, LLM_API_KEY, ADMIN_TOKEN, webhook
 * secrets) and the bot credentials agents.json names by variable (`tokenEnv`,
 * `appSecretEnv`) and the `$NAME`s of MCP servers' env, args, URLs and headers. App ids are not secrets: Feishu shows them to anyone in the app.
 */
import { mcpReferences, type AgentDefinition } from "../config/agents.js";
import type { LoadedConfig } from "../config/load-config.js";
import { SECRET_VARIABLES } from "../config/variables.js";

export function configuredSecrets(
  loaded: Pick<LoadedConfig, "config" | "declaredValue">,
  agents: readonly AgentDefinition[],
): string[] {
  const fromTable = SECRET_VARIABLES.flatMap((key) => {
    const value = loaded.config[key];
    return typeof value === "string" && value !== "" ? [value] : [];
  });
  const named = agents.flatMap((agent) => [
    ...(agent.telegram ? [agent.telegram.tokenEnv] : []),
    ...(agent.feishu ? [agent.feishu.appSecretEnv] : []),
    ...mcpReferences(agent),
  ]);
  // Values are used trimmed (chat-bots.ts); the raw value may carry the spaces of an env file.
  const fromAgents = named.flatMap((name) => {
    const value = loaded.declaredValue(name);
    return value === undefined || value.trim() === "" ? [] : [value, value.trim()];
  });
  return [...new Set([...fromTable, ...fromAgents])];
}

/** The secret variables set in an environment, before any configuration is loaded (the CLI's last-resort error printer). */
export function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  return SECRET_VARIABLES.flatMap((key) => {
    const value = env[key];
    return value === undefined || value === "" ? [] : [value];
  });
}
