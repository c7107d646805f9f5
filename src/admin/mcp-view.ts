/**
 * An agent's MCP servers as an operator sees them (the admin API's `GET /v1/agents/:id/mcp`
 * and `laoding mcp list`): what agents.json configures, merged with what the agent's
 * running toolhost child reports. Only what identifies a server is shown: its command, or
 * its URL's host. `env` and `headers` values (and a URL's credentials, path and query)
 * may hold secrets, so they never leave here; `$NAME` references are shown by name only
 * (they are never resolved here).
 */
import type { AgentDefinition } from "../config/agents.js";
import { referencedNames, type McpServerSetting } from "../config/agent-reach.js";
import type { McpServerStatus } from "../toolhost/protocol.js";

export type McpTransport = "stdio" | "http";

/** What agents.json says about a server, without a single value that could be a secret. */
export type ConfiguredMcpServer = {
  name: string;
  transport: McpTransport;
  configured: { command: string } | { urlHost: string };
};

/** A server's state: the child's (idle, starting, running, backoff, failed, stopped) or "not started" when no child runs. */
export type McpServerState = McpServerStatus["state"] | "not started";

export type McpServerView = ConfiguredMcpServer & {
  state: McpServerState;
  tools: { name: string; description: string }[];
  restarts: number;
  lastError?: string;
  lastErrorAt?: number;
};

export type AgentMcpView = {
  agentId: string;
  /** Whether the agent's toolhost child runs in the bot now (live state comes from it). */
  running: boolean;
  /**
   * Whether this admin API runs inside the bot's process (`laoding start`) and so can ask
   * its toolhost children; false under `laoding admin` alone, which knows only agents.json.
   */
  botAttached: boolean;
  servers: McpServerView[];
};

/** The bot's toolhost pool, as much of it as the MCP view needs (ToolhostPool fits). */
export type BotToolhosts = {
  client(agentId: string): { mcpStatus(): Promise<{ servers: McpServerStatus[] } | undefined> };
};

export function transportOf(setting: McpServerSetting): McpTransport {
  return "url" in setting ? "http" : "stdio";
}

/**
 * `host[:port]` of a server URL as agents.json writes it: credentials (`user:pass@`), path,
 * query and fragment dropped; a `$NAME` in the host stays a name.
 */
export function urlHost(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url);
  return match?.[1] || "(no host)";
}

export function configuredServers(agent: AgentDefinition): ConfiguredMcpServer[] {
  return Object.entries(agent.mcpServers).map(([name, setting]) => ({
    name,
    transport: transportOf(setting),
    configured: "url" in setting ? { urlHost: urlHost(setting.url) } : { command: setting.command },
  }));
}

/**
 * How each `env` (stdio) or `headers` (http) key gets its value, for a person: the
 * `$NAME`s it refers to, or that it is written in agents.json. Never the value itself.
 */
export function valueSources(setting: McpServerSetting): { kind: "env" | "headers"; entries: string[] } {
  const kind = "url" in setting ? "headers" : "env";
  const values: Record<string, string> = "url" in setting ? setting.headers : setting.env;
  const entries = Object.entries(values).map(([key, text]) => {
    // The same reference syntax the bot resolves (agent-reach.ts), read through its own parser.
    const names = referencedNames({ command: "-", args: [text], env: {} });
    if (names.length === 1 && /^\$\{?[A-Z_][A-Z0-9_]*\}?$/.test(text)) return `${key}=$${names[0]}`;
    if (names.length > 0) return `${key} (uses ${names.map((name) => `$${name}`).join(", ")})`;
    return `${key} (written in agents.json, not shown)`;
  });
  return { kind, entries };
}

/** The configured servers with the child's live status merged in by name (none: "not started"). */
export function agentMcpView(
  agent: AgentDefinition,
  live: { servers: McpServerStatus[] } | undefined,
  botAttached: boolean,
): AgentMcpView {
  const byName = new Map((live?.servers ?? []).map((status) => [status.name, status]));
  return {
    agentId: agent.id,
    running: live !== undefined,
    botAttached,
    servers: configuredServers(agent).map((server) => {
      const status = byName.get(server.name);
      if (!status) return { ...server, state: "not started", tools: [], restarts: 0 };
      return {
        ...server,
        state: status.state,
        tools: status.tools.map((tool) => ({ name: tool.name, description: tool.description })),
        restarts: status.restarts,
        ...(status.lastError !== undefined ? { lastError: status.lastError } : {}),
        ...(status.lastErrorAt !== undefined ? { lastErrorAt: status.lastErrorAt } : {}),
      };
    }),
  };
}
