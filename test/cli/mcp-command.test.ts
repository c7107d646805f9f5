/**
 * `laoding mcp list|test` against a real workspace: agent `a` has a stdio MCP server (a
 * tiny SDK server in a's own working tree), one whose command is not installed and a
 * remote one with credentials in its URL and headers; `b` has none. `test` starts the
 * server in a's real toolhost child; `list` asks a real admin API for live state.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { LaunchedAdmin } from "../../src/admin/launch-admin.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { createLogger } from "../../src/log/logger.js";
import { openAgentReach, type AgentReach } from "../../src/runtime/agent-reach.js";
import { openMaintenancePool, type MaintenancePool } from "../../src/runtime/library-maintenance.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore, type Store } from "../../src/store/store.js";
import { launchTestAdmin } from "../helpers/admin.js";
import { runLaoding } from "../helpers/cli.js";
import { CLI_ENTRY, giveToAgent, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const TOKEN = "mcp-cli-admin-token-0123456789";
const SECRETS = {
  FAKE_MCP_TOKEN: "fake-mcp-secret-value-0123456789",
  DOCS_TOKEN: "docs-header-secret-value-0123456789",
  DOCS_KEY: "docs-query-secret-value-0123456789",
};
const LITERAL = "literal-value-in-agents-json";
let workspace: RealWorkspace;

const agents = {
  agents: [
    {
      id: "a",
      name: "A",
      mcpServers: {
        tiny: {
          command: process.execPath,
          args: ["mcp-tiny/server.mjs"],
          // Its script lies in the working tree: run it there (a server not given a folder works in a private home).
          cwd: ".",
          env: { FAKE_TOKEN: "$FAKE_MCP_TOKEN", MODE: LITERAL },
        },
        missing: { command: "laoding-no-such-mcp-server", args: ["--stdio"] },
        docs: {
          url: "https://user:pw@mcp.example.test:8443/v1/mcp?key=$DOCS_KEY",
          headers: { Authorization: "Bearer $DOCS_TOKEN" },
        },
      },
    },
    { id: "b", name: "B" },
  ],
};

/** A stdio MCP server with the SDK, importing it by absolute path: the jail binds the bot's node_modules at its real path. */
function tinyServer(): string {
  const sdk = join(REAL_REPO_ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm");
  return `import { Server } from ${JSON.stringify(`${sdk}/server/index.js`)};
import { StdioServerTransport } from ${JSON.stringify(`${sdk}/server/stdio.js`)};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(`${sdk}/types.js`)};
const server = new Server({ name: "tiny", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [
  { name: "echo", description: "Returns the text it is given.\\nA second line.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  { name: "token_set", description: "Whether FAKE_TOKEN is set (never its value).", inputSchema: { type: "object", properties: {} } },
] }));
server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: "text", text: String(request.params.arguments?.text) }] }));
await server.connect(new StdioServerTransport());
`;
}

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN, ...SECRETS });
  writeFileSync(workspace.layout.agentsFile, JSON.stringify(agents));
  const serverDir = join(workspace.layout.agentTrees("a").workTree, "mcp-tiny");
  mkdirSync(serverDir, { recursive: true });
  writeFileSync(join(serverDir, "server.mjs"), tinyServer());
  giveToAgent(workspace, "a", serverDir);
}, 60_000);

const mcp = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runLaoding(["mcp", ...args, "--workspace", workspace.workspaceDir], { repoRoot: workspace.repoRoot, env });

const expectNoSecrets = (text: string) => {
  for (const secret of [...Object.values(SECRETS), LITERAL, "user:pw", "key=", "Bearer"])
    expect(text).not.toContain(secret);
};

describe("laoding mcp list", () => {
  it("shows each agent's servers from agents.json, value sources by name only, and that the bot is not running", async () => {
    const result = await mcp(["list"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        "agent a",
        `  tiny  stdio  ${process.execPath} mcp-tiny/server.mjs`,
        "    env: FAKE_TOKEN=$FAKE_MCP_TOKEN, MODE (written in agents.json, not shown)",
        "  missing  stdio  laoding-no-such-mcp-server --stdio",
        "  docs  http  mcp.example.test:8443",
        "    headers: Authorization (uses $DOCS_TOKEN)",
        "agent b",
        '  no MCP servers; add them under "mcpServers" in agents.json (docs/mcp.md, "Using MCP servers")',
        "live state: none (the bot is not running in this workspace); `laoding mcp test a tiny` starts a server once and lists its tools",
        "",
      ].join("\n"),
    );
    expectNoSecrets(result.stdout);
  });

  it("--json and --agent; an unknown agent is named with the known ones", async () => {
    const result = await mcp(["list", "--agent", "a", "--json"]);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { live: { available: boolean }; agents: { servers: unknown[] }[] };
    expect(parsed.live).toEqual({ available: false, reason: "the bot is not running in this workspace" });
    expect(parsed.agents).toHaveLength(1);
    expect(parsed.agents[0]?.servers).toEqual([
      {
        name: "tiny",
        transport: "stdio",
        configured: { command: process.execPath },
        state: "not started",
        tools: [],
        restarts: 0,
      },
      {
        name: "missing",
        transport: "stdio",
        configured: { command: "laoding-no-such-mcp-server" },
        state: "not started",
        tools: [],
        restarts: 0,
      },
      {
        name: "docs",
        transport: "http",
        configured: { urlHost: "mcp.example.test:8443" },
        state: "not started",
        tools: [],
        restarts: 0,
      },
    ]);
    expectNoSecrets(result.stdout);
    expect(await mcp(["list", "--agent", "nobody"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no agent "nobody"; known: a, b'),
    });
  });

  it("a running bot without its admin API says how to get live state", async () => {
    writeFileSync(join(workspace.layout.dataDir, "bot.pid"), `${process.pid}\n`);
    try {
      const result = await mcp(["list", "--agent", "a"], { ADMIN_PORT: "0" });
      expect(result.stdout).toContain(
        `live state: none (the bot runs (pid ${process.pid}) but its admin API is off (ADMIN_PORT=0); set ADMIN_PORT and ADMIN_TOKEN and restart it to see live state)`,
      );
    } finally {
      rmSync(join(workspace.layout.dataDir, "bot.pid"), { force: true });
    }
  });

  it("asks the running bot's admin API: state, tool count and restarts of each server", async () => {
    // The bot's toolhosts, as `laoding start` has them: the agents' MCP servers resolved, then the pool.
    const config = { config: workspace.config, layout: workspace.layout };
    const logger = createLogger({ level: "silent", secrets: [] });
    const lookup = (name: string) => SECRETS[name as keyof typeof SECRETS];
    const agentList = readAgentsFile(workspace.layout.agentsFile);
    const reach: AgentReach = await openAgentReach({ ...config, agents: agentList, lookup, logger });
    const store: Store = await openStore(workspace.layout.databaseTarget, systemClock);
    const pool: MaintenancePool = openMaintenancePool({
      ...config,
      agents: agentList,
      store,
      logger,
      cliEntry: CLI_ENTRY,
      onWarning: () => undefined,
      reach,
    });
    const admin = (await launchTestAdmin(workspace, { secrets: [], logLines: [] })) as LaunchedAdmin;
    try {
      admin.attachBot({ client: (agentId) => pool.client(agentId) });
      // Listing the tools starts the servers that may start (lazily, as a turn does).
      await pool.client("a").listTools({ refresh: true });
      expect(await pool.client("a").callTool({ name: "mcp.tiny.echo", args: { text: "hi" } })).toMatchObject({
        ok: true,
      });
      writeFileSync(join(workspace.layout.dataDir, "bot.pid"), `${process.pid}\n`);
      const port = new URL(admin.url).port;
      const result = await mcp(["list"], { ADMIN_PORT: port });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("agent a (toolhost running)\n");
      expect(result.stdout).toMatch(/\n {2}tiny {2}stdio .*\n.*\n {4}running · 2 tools · 0 restarts\n/);
      expect(result.stdout).toMatch(
        /\n {2}missing {2}stdio .*\n {4}(backoff|failed) · 0 tools · \d+ restarts? · last error \d{4}-\d\d-\d\dT[\d:.]+Z: .*command not found: laoding-no-such-mcp-server/,
      );
      expect(result.stdout).not.toContain("live state: none");
      expectNoSecrets(result.stdout);
      // Agent b has no servers: nothing was asked about it, and it still says how to add one.
      expect(result.stdout).toContain("agent b\n  no MCP servers");
    } finally {
      rmSync(join(workspace.layout.dataDir, "bot.pid"), { force: true });
      await admin.close();
      await pool.close();
      await store.close();
      await reach.close();
    }
  }, 30_000);
});

describe("laoding mcp test", () => {
  it("starts the server in the agent's sandbox and lists its tools with their descriptions' first lines", async () => {
    const result = await mcp(["test", "a", "tiny"]);
    expect(result.stderr).toBe("starting tiny in agent a's sandbox…\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^tiny \(stdio\) in agent a's sandbox: 2 tools in \d+ ms\n/);
    // The names the agent's model knows them by, each with its description's first line.
    expect(result.stdout).toMatch(/^ {2}mcp\.tiny\.echo +Returns the text it is given\.$/m);
    expect(result.stdout).not.toContain("A second line");
    expect(result.stdout).toMatch(/^ {2}mcp\.tiny\.token_set +Whether FAKE_TOKEN is set \(never its value\)\.$/m);
    expectNoSecrets(result.stdout + result.stderr);
  }, 30_000);

  it("a command that is not installed: exit 1, naming it and what to do", async () => {
    const result = await mcp(["test", "a", "missing"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("missing did not start");
    expect(result.stderr).toMatch(/next: install `laoding-no-such-mcp-server` on the host/);
  }, 30_000);

  it("a `$NAME` that is not set is named, and nothing starts", async () => {
    const withUnset = structuredClone(agents) as { agents: Record<string, unknown>[] };
    withUnset.agents.push({
      id: "c",
      name: "C",
      mcpServers: { needs: { command: process.execPath, env: { K: "$LAODING_UNSET_FOR_TEST" } } },
    });
    writeFileSync(workspace.layout.agentsFile, JSON.stringify(withUnset));
    try {
      const result = await mcp(["test", "c", "needs"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("$LAODING_UNSET_FOR_TEST");
      expect(result.stdout).toBe("");
    } finally {
      writeFileSync(workspace.layout.agentsFile, JSON.stringify(agents));
    }
  }, 30_000);

  it("an unknown agent or server names the known ones", async () => {
    expect(await mcp(["test", "a", "nope"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('agent a has no MCP server "nope"; its servers: tiny, missing, docs'),
    });
    expect(await mcp(["test", "b", "nope"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('agent b has no MCP server "nope"; it has no MCP servers; add them under'),
    });
    expect(await mcp(["test", "nobody", "tiny"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no agent "nobody"; known: a, b'),
    });
    expect(await mcp(["test", "a"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("test needs an agent and a server"),
    });
    expect(await mcp(["test", "a", "tiny", "--timeout-ms", "soon"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--timeout-ms must be a positive whole number, not "soon"'),
    });
  });
});
