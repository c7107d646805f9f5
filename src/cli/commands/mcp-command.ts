/**
 * `laoding mcp list|test`: an operator's look at agents' MCP servers (docs/mcp.md, "Using
 * MCP servers"). `list` reads agents.json and asks the running bot (its admin API) for
 * live state; `test` starts one server in the agent's own sandbox, through a maintenance
 * toolhost as `laoding library` does, lists its tools and stops it. Nothing here prints
 * an `env` or `headers` value: `$NAME` references are shown by name only.
 */
import { askBotForMcp, type BotMcpAnswer } from "../../admin/bot-mcp-client.js";
import {
  agentMcpView,
  transportOf,
  urlHost,
  valueSources,
  type AgentMcpView,
  type McpServerView,
} from "../../admin/mcp-view.js";
import type { AgentDefinition } from "../../config/agents.js";
import type { McpServerSetting } from "../../config/agent-reach.js";
import { openAgentReach, type AgentReach } from "../../runtime/agent-reach.js";
import { openMaintenancePool } from "../../runtime/library-maintenance.js";
import { systemClock } from "../../store/clock.js";
import { openStore } from "../../store/store.js";
import { ToolhostError } from "../../toolhost/client/toolhost-error.js";
import { createRedactor } from "../../log/redact.js";
import { bootstrap, type Boot } from "../bootstrap.js";
import { CLI_ENTRY, UsageError, writeLine, type CliContext, type Command } from "../cli-context.js";
import { parseFlags, WORKSPACE_FLAG } from "../parse-flags.js";

const usage = `Usage: laoding mcp list [--agent ID] [--json] [--workspace DIR]
       laoding mcp test <agent> <server> [--timeout-ms N] [--workspace DIR]

  list    each agent's MCP servers from agents.json (name, transport, command or URL
          host), with live state from the running bot when its admin API answers
          (ADMIN_PORT, ADMIN_TOKEN): state, tools, restarts, last error
  test    start one server in the agent's own sandbox, list its tools, stop it;
          exits 1 when it does not start

Options:
  --agent ID        only this agent (list; default: all)
  --json            machine-readable output (list)
  --timeout-ms N    how long test waits for the tools list (default MCP_START_TIMEOUT_MS + 5000)
${WORKSPACE_FLAG.help()}
  -h, --help        show this help`;

const HOW_TO_ADD = 'no MCP servers; add them under "mcpServers" in agents.json (docs/mcp.md, "Using MCP servers")';

export const mcpCommand: Command = {
  name: "mcp",
  summary: "list agents' MCP servers and their live state, or test-start one in its agent's sandbox",
  usage,
  async run(context) {
    const { values, positionals } = parseFlags(
      context.args,
      {
        agent: { type: "string" },
        json: { type: "boolean" },
        "timeout-ms": { type: "string" },
        ...WORKSPACE_FLAG.option,
      },
      usage,
      true,
    );
    if (values.help) return (writeLine(context.stdout, usage), 0);
    const [action, ...rest] = positionals;
    if (action !== "list" && action !== "test")
      throw new UsageError(action ? `unknown action "${action}"` : "an action is required", usage);
    // stdout is the result: logs go to the log file (bootstrap.ts).
    const boot = bootstrap(context, {
      seed: false,
      workspaceDir: values.workspace,
      logRouting: { interactive: () => false },
    });
    if (action === "list") {
      if (rest.length > 0) throw new UsageError(`list takes no arguments (got "${rest.join(" ")}")`, usage);
      const agents = boot.agents.filter((agent) => !values.agent || agent.id === values.agent);
      if (agents.length === 0) throw new UsageError(unknownAgent(values.agent ?? "", boot), usage);
      return listServers(context, boot, agents, values.json === true);
    }
    const [agentId, server, ...extra] = rest;
    if (!agentId || !server || extra.length > 0) throw new UsageError("test needs an agent and a server", usage);
    const agent = boot.agents.find((candidate) => candidate.id === agentId);
    if (!agent) throw new UsageError(unknownAgent(agentId, boot), usage);
    const setting = agent.mcpServers[server];
    if (!setting) {
      const known = Object.keys(agent.mcpServers);
      throw new UsageError(
        `agent ${agent.id} has no MCP server "${server}"; ${known.length > 0 ? `its servers: ${known.join(", ")}` : `it has ${HOW_TO_ADD}`}`,
        usage,
      );
    }
    const timeoutMs =
      values["timeout-ms"] === undefined
        ? boot.loaded.config.MCP_START_TIMEOUT_MS + 5_000
        : Number(values["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw new UsageError(`--timeout-ms must be a positive whole number, not "${values["timeout-ms"]}"`, usage);
    return testServer(context, boot, agent, server, setting, timeoutMs);
  },
};

function unknownAgent(agentId: string, boot: Boot): string {
  return `no agent "${agentId}"; known: ${boot.agents.map((agent) => agent.id).join(", ")}`;
}

async function listServers(context: CliContext, boot: Boot, agents: AgentDefinition[], json: boolean): Promise<number> {
  const withServers = agents.filter((agent) => Object.keys(agent.mcpServers).length > 0);
  const bot: BotMcpAnswer =
    withServers.length === 0
      ? { available: false, reason: "no agent listed has MCP servers" }
      : await askBotForMcp({
          dataDir: boot.layout.dataDir,
          config: boot.loaded.config,
          agentIds: withServers.map((agent) => agent.id),
        });
  // The bot's view has the live state; agents.json here says what is configured now.
  const views = agents.map((agent) => {
    const local = agentMcpView(agent, undefined, false);
    const live = bot.available ? bot.views.get(agent.id) : undefined;
    const servers = local.servers.map((server) => live?.servers.find((other) => other.name === server.name) ?? server);
    return { ...local, running: live?.running ?? false, botAttached: live !== undefined, servers };
  });
  const nextStep = (agent: AgentMcpView | undefined) =>
    agent?.servers[0]
      ? `; \`laoding mcp test ${agent.agentId} ${agent.servers[0].name}\` starts a server once and lists its tools`
      : "";
  const liveLine =
    bot.available || withServers.length === 0
      ? undefined
      : `live state: none (${bot.reason})${nextStep(views.find((view) => view.servers.length > 0))}`;
  if (json) {
    const live = bot.available ? { available: true, url: bot.url } : { available: false, reason: bot.reason };
    writeLine(context.stdout, JSON.stringify({ live, agents: views }, null, 2));
    return 0;
  }
  // The child keeps secrets out of its errors; this is the second fence for what is printed here.
  const { redact } = createRedactor([...(context.secrets ?? [])]);
  for (const [index, view] of views.entries()) {
    const agent = agents[index] as AgentDefinition;
    writeLine(
      context.stdout,
      `agent ${agent.id}${bot.available && view.servers.length > 0 ? ` (toolhost ${view.running ? "running" : "not running"})` : ""}`,
    );
    if (view.servers.length === 0) writeLine(context.stdout, `  ${HOW_TO_ADD}`);
    for (const server of view.servers)
      printServer(context, server, agent.mcpServers[server.name] as McpServerSetting, bot.available, redact);
    if (bot.available && !bot.views.get(agent.id) && view.servers.length > 0)
      writeLine(context.stdout, `  the running bot has no agent ${agent.id}: restart it to apply agents.json`);
  }
  if (liveLine) writeLine(context.stdout, liveLine);
  return 0;
}

function printServer(
  context: CliContext,
  server: McpServerView,
  setting: McpServerSetting,
  live: boolean,
  redact: (text: string) => string,
): void {
  const where = "url" in setting ? urlHost(setting.url) : [setting.command, ...setting.args].join(" ");
  writeLine(context.stdout, `  ${server.name}  ${server.transport}  ${where}`);
  const sources = valueSources(setting);
  if (sources.entries.length > 0) writeLine(context.stdout, `    ${sources.kind}: ${sources.entries.join(", ")}`);
  if (!live) return;
  const error = server.lastError
    ? ` · last error${server.lastErrorAt === undefined ? "" : ` ${new Date(server.lastErrorAt).toISOString()}`}: ${redact(server.lastError)}`
    : "";
  writeLine(
    context.stdout,
    `    ${server.state} · ${count(server.tools.length, "tool")} · ${count(server.restarts, "restart")}${error}`,
  );
}

async function testServer(
  context: CliContext,
  boot: Boot,
  agent: AgentDefinition,
  server: string,
  setting: McpServerSetting,
  timeoutMs: number,
): Promise<number> {
  // Only this server: another's unset `$NAME` or missing command must not stop its test.
  const alone: AgentDefinition = { ...agent, mcpServers: { [server]: setting } };
  const reach = await openAgentReach({
    config: boot.loaded.config,
    layout: boot.layout,
    agents: [alone],
    lookup: (name) => boot.loaded.declaredValue(name),
    logger: boot.logger,
  });
  for (const secret of reach.secrets) context.secrets?.add(secret);
  for (const warning of reach.warnings) boot.warn(warning);
  try {
    return await testThroughToolhost(context, boot, alone, server, setting, timeoutMs, reach);
  } finally {
    await reach.close();
  }
}

async function testThroughToolhost(
  context: CliContext,
  boot: Boot,
  agent: AgentDefinition,
  server: string,
  setting: McpServerSetting,
  timeoutMs: number,
  reach: AgentReach,
): Promise<number> {
  const store = await openStore(boot.layout.databaseTarget, systemClock);
  const logFile = boot.logFile;
  const pool = openMaintenancePool({
    config: boot.loaded.config,
    layout: boot.layout,
    agents: [agent],
    store,
    logger: boot.logger,
    cliEntry: CLI_ENTRY,
    onWarning: (warning) => boot.warn(warning),
    reach,
    ...(logFile ? { childStderr: () => logFile.fd() } : {}),
  });
  try {
    writeLine(context.stderr, `starting ${server} in agent ${agent.id}'s sandbox…`);
    let result: { ok: boolean; tools: { name: string; description: string }[]; error?: string; durationMs: number };
    try {
      result = await pool.client(agent.id).mcpTest(server, timeoutMs);
    } catch (error) {
      if (!(error instanceof ToolhostError)) throw error;
      const reason =
        error.code === "TIMEOUT"
          ? `no tools list within ${timeoutMs} ms`
          : `the agent's toolhost failed: ${error.message}`;
      result = { ok: false, tools: [], error: reason, durationMs: timeoutMs };
    }
    if (!result.ok) {
      const { redact } = createRedactor([...(context.secrets ?? [])]);
      writeLine(
        context.stderr,
        redact(`${server} did not start (${result.durationMs} ms): ${result.error ?? "no reason given"}`),
      );
      writeLine(context.stderr, `next: ${nextStep(agent, setting, result.error ?? "")}`);
      return 1;
    }
    writeLine(
      context.stdout,
      `${server} (${transportOf(setting)}) in agent ${agent.id}'s sandbox: ${result.tools.length} tools in ${result.durationMs} ms`,
    );
    const width = Math.max(0, ...result.tools.map((tool) => tool.name.length));
    for (const tool of result.tools)
      writeLine(context.stdout, `  ${tool.name.padEnd(width)}  ${firstLine(tool.description)}`.trimEnd());
    return 0;
  } finally {
    await pool.close();
    await store.close();
  }
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** Whether the agent's network lets npx download a package. */
function reachesRegistry(agent: AgentDefinition): boolean {
  if (typeof agent.network === "boolean") return agent.network;
  return agent.network.allow.some((entry) => /^(registry\.npmjs\.org|\*\.npmjs\.org)(:443)?$/.test(entry));
}

/** What to do about a server that did not start, from the reason the child gave. */
function nextStep(agent: AgentDefinition, setting: McpServerSetting, error: string): string {
  const network = "docs/network.md";
  if ("url" in setting) {
    if (/allow list|NETWORK_REFUSED/i.test(error))
      return `allow ${urlHost(setting.url)} in agent ${agent.id}'s "network": { "allow": [...] } in agents.json (${network})`;
    return `check that ${urlHost(setting.url)} serves MCP over Streamable HTTP and that agent ${agent.id}'s network allow list has it (${network})`;
  }
  if (/ENOENT|not found|not installed|no such file/i.test(error))
    return `install \`${setting.command}\` on the host where agent ${agent.id}'s sandbox can run it (system folders are visible read-only), or give its absolute path as "command" in agents.json`;
  const timedOut = /within|timed? ?out|timeout/i.test(error);
  if (setting.command === "npx" && !reachesRegistry(agent))
    return `npx downloads the package first, and agent ${agent.id} cannot reach the npm registry: add registry.npmjs.org to its "network" allow list (${network}) or install the package on the host beforehand`;
  if (timedOut)
    return "raise --timeout-ms (and MCP_START_TIMEOUT_MS for the bot), or check the server starts quickly on its own";
  return `run \`${[setting.command, ...setting.args].join(" ")}\` by hand to see what it prints, and the log (laoding logs) for its stderr`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
