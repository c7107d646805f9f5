/**
 * The agents' reach beyond their folders, prepared once per bot process before any
 * toolhost child starts: the egress proxy (one per process, a Unix socket per agent with
 * an allow list, which the agent's jail binds as its only way out) and each agent's MCP
 * servers with their `$NAME`s resolved (sent to the child on the protocol at each start).
 * Everything an operator wrote wrong stops start-up here, naming the agent and the key.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { isIP } from "node:net";
import { parse as parseConnectionString } from "pg-connection-string";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { allowListOf, resolveMcpServer, UnsetReferenceError } from "../config/agent-reach.js";
import type { AgentDefinition } from "../config/agents.js";
import { ConfigError } from "../config/config-error.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { parseAllowList } from "../egress/allow-list.js";
import type { OwnEndpoint } from "../egress/egress-decision.js";
import { loadEgressHosts, type EgressHosts } from "../egress/egress-hosts.js";
import { startEgressProxy, type EgressProxy } from "../egress/egress-proxy.js";
import { systemLookup } from "../egress/system-lookup.js";
import type { Logger } from "../log/logger.js";
import { agentUid } from "../toolhost/sandbox/agent-identity.js";
import { TOOL_PATH } from "../toolhost/sandbox/command-launchers.js";
import type { McpServerConfig } from "../toolhost/protocol.js";
import type { LaunchReach, McpConfigureParams } from "./toolhost-launch.js";

export type AgentReach = LaunchReach & {
  /** The resolved `$NAME` values: the log redactor hides them. */
  secrets: string[];
  /** Said on the console and in the log (a server the sandbox cannot start, a remote one the allow list does not reach). */
  warnings: string[];
  proxy: EgressProxy | undefined;
  close(): Promise<void>;
};

export type AgentReachOptions = {
  config: Config;
  layout: RuntimeLayout;
  agents: readonly AgentDefinition[];
  /** A variable's value from the environment, then the env files (LoadedConfig.declaredValue). */
  lookup: (name: string) => string | undefined;
  logger: Logger;
  isRoot?: boolean;
  /** Name resolution of the proxy (tests); default the system's. */
  resolve?: (name: string) => Promise<readonly string[]>;
};

/** What the agents' MCP servers come to, resolved: checked the same way at start and by `laoding doctor`. */
export type ResolvedServers = {
  mcp: Map<string, McpConfigureParams>;
  secrets: string[];
  /** A command the sandbox will not find, a remote server the agent cannot reach. */
  warnings: string[];
};

/** Resolves every agent's `$NAME`s; throws a ConfigError naming the agent, the key and the variable. */
export function resolveServers(
  options: Pick<AgentReachOptions, "config" | "layout" | "agents" | "lookup">,
): ResolvedServers {
  const { config, layout } = options;
  const secrets: string[] = [];
  const warnings: string[] = [];
  const mcp = new Map<string, McpConfigureParams>();
  for (const agent of options.agents) {
    const agentSecrets: string[] = [];
    const servers = resolveAgentServers(agent, options.lookup, layout.agentTrees(agent.id).workTree, agentSecrets);
    if (servers.length === 0) continue;
    secrets.push(...agentSecrets);
    warnings.push(...serverWarnings(agent, servers));
    mcp.set(agent.id, {
      servers,
      startTimeoutMs: config.MCP_START_TIMEOUT_MS,
      callTimeoutMs: config.TOOLHOST_CALL_TIMEOUT_MS,
      secrets: [...new Set(agentSecrets)],
    });
  }
  return { mcp, secrets, warnings };
}

export async function openAgentReach(options: AgentReachOptions): Promise<AgentReach> {
  const { config, layout } = options;
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const resolve = options.resolve ?? systemLookup;
  const { mcp, secrets, warnings } = resolveServers(options);

  const listed = options.agents.filter((agent) => allowListOf(agent.network) !== undefined);
  let proxy: EgressProxy | undefined;
  let socketDir: string | undefined;
  const sockets = new Map<string, string>();
  if (listed.length > 0) {
    const hosts = await egressHosts(layout);
    // A short path of this process's own: a socket path is at most 108 bytes, and a
    // second process of the same workspace (`laoding mcp test` beside the bot) has its own.
    socketDir = mkdtempSync(join(tmpdir(), "laoding-egress-"));
    chmodSync(socketDir, 0o711);
    proxy = startEgressProxy({
      socketDir,
      hosts,
      ownEndpoints: await ownEndpoints(config, resolve, warnings),
      logger: options.logger.child({ component: "egress" }),
      lookup: resolve,
    });
    for (const agent of listed) {
      const allow = parseAllowList(allowListOf(agent.network) ?? []);
      const owner = isRoot ? agentUid(agent.id, config.TOOLHOST_UID_BASE) : undefined;
      sockets.set(
        agent.id,
        await proxy.addAgent({
          agentId: agent.id,
          allow,
          ...(owner !== undefined ? { owner: { uid: owner, gid: owner } } : {}),
        }),
      );
    }
  }
  return {
    secrets: [...new Set(secrets)],
    warnings,
    proxy,
    egressSocket: (agentId) => sockets.get(agentId),
    mcp: (agentId) => mcp.get(agentId),
    async close() {
      await proxy?.close();
      if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

function resolveAgentServers(
  agent: AgentDefinition,
  lookup: (name: string) => string | undefined,
  workTree: string,
  secrets: string[],
): McpServerConfig[] {
  return Object.entries(agent.mcpServers).map(([name, server]) => {
    try {
      const resolved = resolveMcpServer(name, server, lookup, workTree);
      secrets.push(...resolved.secrets);
      return resolved.config;
    } catch (error) {
      if (!(error instanceof UnsetReferenceError)) throw error;
      throw new ConfigError(`agents.json: agent "${agent.id}": ${error.message}`, {
        hint: `Set ${error.variable} in the bot's environment or its env file (configs/env), or change the server's entry`,
      });
    }
  });
}

/** What start-up can tell before a server is ever started: a command the sandbox will not find, a host the agent cannot reach. */
function serverWarnings(agent: AgentDefinition, servers: readonly McpServerConfig[]): string[] {
  const allow = allowListOf(agent.network);
  return servers.flatMap((server) => {
    if (server.transport === "stdio") {
      return commandFound(server.command)
        ? []
        : [
            `agent ${agent.id}: MCP server ${server.name}: the command "${server.command}" is not installed (not found in ${TOOL_PATH}); install it, or give its absolute path`,
          ];
    }
    if (agent.network === true) return [];
    const host = new URL(server.url).hostname;
    return allow === undefined
      ? [
          `agent ${agent.id}: MCP server ${server.name} is remote (${host}) but the agent has no network; add "network": { "allow": ["${host}"] } to reach it`,
        ]
      : [];
  });
}

function commandFound(command: string): boolean {
  if (command.includes("/")) return existsSync(command);
  return TOOL_PATH.split(delimiter).some((dir) => existsSync(join(dir, command)));
}

/** The EGRESS_HOSTS file as the proxy will read it; a ConfigError naming `file:line` when it is wrong. */
export async function egressHosts(layout: Pick<RuntimeLayout, "egressHostsFile">): Promise<EgressHosts> {
  if (!layout.egressHostsFile) return new Map();
  try {
    return await loadEgressHosts(layout.egressHostsFile);
  } catch (error) {
    throw new ConfigError(`EGRESS_HOSTS: ${(error as Error).message}`, {
      hint: "Write one `<address> <name> [<name>...]` per line (# starts a comment), or unset EGRESS_HOSTS",
    });
  }
}

/**
 * The bot's own listeners and services, which no agent may reach whatever its list says:
 * the admin API, the webhook servers, the database server; the model endpoint too unless
 * the agent lists its host by name.
 */
async function ownEndpoints(
  config: Config,
  resolve: (name: string) => Promise<readonly string[]>,
  unresolved: string[],
): Promise<OwnEndpoint[]> {
  const endpoints: OwnEndpoint[] = [];
  // Listeners are named by the address they bind; a name is resolved here, once, as the proxy needs addresses.
  const listener = async (label: string, host: string, port: number) => {
    const addresses = isIP(host) ? [host] : await resolve(host).catch(() => [] as readonly string[]);
    for (const address of addresses) endpoints.push({ label, address, port });
  };
  if (config.ADMIN_PORT > 0) await listener("admin", config.ADMIN_HOST, config.ADMIN_PORT);
  const webhookHost = config.WEBHOOK_HOST ?? "127.0.0.1";
  if (config.TELEGRAM_WEBHOOK_URL) await listener("webhooks", webhookHost, config.TELEGRAM_WEBHOOK_PORT);
  if (config.FEISHU_WEBHOOK_PORT > 0) await listener("webhooks", webhookHost, config.FEISHU_WEBHOOK_PORT);
  const remote = async (label: string, host: string, port: number, exempt: boolean) => {
    // A name as the proxy compares names: lower case, without the root's dot (`LOCALHOST.`).
    const name = host
      .replace(/^\[|\]$/g, "")
      .replace(/\.$/, "")
      .toLowerCase();
    if (!name) return;
    const addresses = isIP(name) ? [name] : await resolve(name).catch(() => [] as readonly string[]);
    if (addresses.length === 0)
      unresolved.push(
        `the ${label}'s host ${name} could not be resolved at start, so agents with an allow list are not kept from it by address; list its address in EGRESS_HOSTS or fix the name`,
      );
    for (const address of addresses)
      endpoints.push({ label, address, port, ...(exempt ? { exemptWhenListedByName: true, name } : {}) });
  };
  const model = parsedUrl(config.LLM_BASE_URL);
  if (model)
    await remote(
      "model endpoint",
      model.hostname,
      model.port === "" ? (model.protocol === "https:" ? 443 : 80) : Number(model.port),
      true,
    );
  // As pg reads it: `?host=` and `?port=` win over the URL's authority; a socket folder is no TCP endpoint.
  if (config.DATABASE_URL) {
    const database = parseConnectionString(config.DATABASE_URL);
    const port = Number(database.port || 5432);
    for (const host of (database.host ?? "localhost").split(","))
      if (host !== "" && !host.startsWith("/")) await remote("database", host, port, false);
  }
  return endpoints;
}

function parsedUrl(url: string | undefined): URL | undefined {
  if (!url) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
