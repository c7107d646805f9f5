/**
 * `GET /v1/agents/:id/mcp` for real: the admin server on 127.0.0.1:0 over a seeded
 * workspace whose agent `a` has a stdio MCP server (a tiny SDK server in a's own working
 * tree, run by a real toolhost child) and a remote one with credentials in its URL and
 * headers. First apart from any bot (`laoding admin`: agents.json only), then with a
 * toolhost pool attached as `laoding start` attaches the bot's: live state.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LaunchedAdmin } from "../../src/admin/launch-admin.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { createLogger } from "../../src/log/logger.js";
import { openAgentReach, type AgentReach } from "../../src/runtime/agent-reach.js";
import { openMaintenancePool, type MaintenancePool } from "../../src/runtime/library-maintenance.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore, type Store } from "../../src/store/store.js";
import { launchTestAdmin } from "../helpers/admin.js";
import { CLI_ENTRY, giveToAgent, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

const TOKEN = "admin-mcp-token-for-tests-0123456789";
const SECRETS = {
  FAKE_MCP_TOKEN: "fake-mcp-secret-value-0123456789",
  DOCS_TOKEN: "docs-header-secret-value-0123456789",
  DOCS_KEY: "docs-query-secret-value-0123456789",
};
let workspace: RealWorkspace;
let admin: LaunchedAdmin;
let store: Store | undefined;
let pool: MaintenancePool | undefined;
let reach: AgentReach | undefined;
const logLines: string[] = [];

/** A stdio MCP server with the SDK, importing it by absolute path: the jail binds the bot's node_modules at its real path. */
function tinyServer(): string {
  const sdk = join(REAL_REPO_ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm");
  return `import { Server } from ${JSON.stringify(`${sdk}/server/index.js`)};
import { StdioServerTransport } from ${JSON.stringify(`${sdk}/server/stdio.js`)};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(`${sdk}/types.js`)};
const server = new Server({ name: "tiny", version: "1.0.0" }, { capabilities: { tools: {} } });
const input = { type: "object", properties: { text: { type: "string" } } };
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [
  { name: "echo", description: "Returns the text it is given.\\nA second line.", inputSchema: input },
  { name: "token_set", description: "Whether FAKE_TOKEN is set (never its value).", inputSchema: { type: "object", properties: {} } },
] }));
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: "text", text: request.params.name === "echo" ? String(request.params.arguments?.text) : String(process.env.FAKE_TOKEN !== undefined) }],
}));
await server.connect(new StdioServerTransport());
`;
}

type Envelope = { ok: boolean; data?: any; error?: { code: string; message: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any -- the tests read the answer's shape

async function get(
  path: string,
  token: string | null = TOKEN,
): Promise<{ status: number; text: string; json: Envelope }> {
  const response = await fetch(`${admin.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Envelope };
}

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN, ...SECRETS });
  writeFileSync(
    workspace.layout.agentsFile,
    JSON.stringify({
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
              env: { FAKE_TOKEN: "$FAKE_MCP_TOKEN", MODE: "literal-value-in-agents-json" },
            },
            docs: {
              url: "https://user:pw@mcp.example.test:8443/v1/mcp?key=$DOCS_KEY",
              headers: { Authorization: "Bearer $DOCS_TOKEN" },
            },
          },
        },
        { id: "b", name: "B" },
      ],
    }),
  );
  const serverDir = join(workspace.layout.agentTrees("a").workTree, "mcp-tiny");
  mkdirSync(serverDir, { recursive: true });
  writeFileSync(join(serverDir, "server.mjs"), tinyServer());
  admin = (await launchTestAdmin(workspace, {
    secrets: [TOKEN, ...Object.values(SECRETS)],
    logLines,
  })) as LaunchedAdmin;
  giveToAgent(workspace, "a", serverDir);
}, 60_000);

afterAll(async () => {
  await admin?.close();
  await pool?.close();
  await store?.close();
  await reach?.close();
});

const expectNoSecrets = (text: string) => {
  for (const secret of [
    ...Object.values(SECRETS),
    "literal-value-in-agents-json",
    "user:pw",
    "key=",
    "Bearer",
    "$DOCS",
  ])
    expect(text).not.toContain(secret);
};

describe("admin API: an agent's MCP servers", () => {
  it("needs the token, like every route", async () => {
    const answer = await get("/v1/agents/a/mcp", null);
    expect(answer.status).toBe(401);
    expect(answer.json.error?.code).toBe("UNAUTHORIZED");
    expect((await get("/v1/agents/nobody/mcp")).json.error?.code).toBe("AGENT_NOT_FOUND");
  });

  it("apart from a bot: agents.json's servers, not started, with the command or the URL's host only", async () => {
    const answer = await get("/v1/agents/a/mcp");
    expect(answer.status).toBe(200);
    expect(answer.json.data).toEqual({
      agentId: "a",
      running: false,
      botAttached: false,
      servers: [
        {
          name: "tiny",
          transport: "stdio",
          state: "not started",
          tools: [],
          restarts: 0,
          configured: { command: process.execPath },
        },
        {
          name: "docs",
          transport: "http",
          state: "not started",
          tools: [],
          restarts: 0,
          configured: { urlHost: "mcp.example.test:8443" },
        },
      ],
    });
    expectNoSecrets(answer.text);
    expect((await get("/v1/agents/b/mcp")).json.data).toEqual({
      agentId: "b",
      running: false,
      botAttached: false,
      servers: [],
    });
  });

  it("with the bot's toolhosts attached: not started until the child runs, then the child's live state", async () => {
    // The bot's toolhosts, as `laoding start` has them: the agents' MCP servers resolved, then the pool.
    const agents = readAgentsFile(workspace.layout.agentsFile);
    const logger = createLogger({ level: "silent", secrets: [] });
    const lookup = (name: string) => SECRETS[name as keyof typeof SECRETS];
    reach = await openAgentReach({ config: workspace.config, layout: workspace.layout, agents, lookup, logger });
    store = await openStore(workspace.layout.databaseTarget, systemClock);
    pool = openMaintenancePool({
      config: workspace.config,
      layout: workspace.layout,
      agents,
      store,
      logger,
      cliEntry: CLI_ENTRY,
      onWarning: () => undefined,
      reach,
    });
    const toolhosts = pool;
    admin.attachBot({ client: (agentId) => toolhosts.client(agentId) });
    const before = await get("/v1/agents/a/mcp");
    expect(before.json.data).toMatchObject({ running: false, botAttached: true });
    expect(before.json.data.servers.map((server: { state: string }) => server.state)).toEqual([
      "not started",
      "not started",
    ]);

    // Listing the tools starts the servers (lazily, as a turn does) in a's sandbox.
    await toolhosts.client("a").listTools({ refresh: true });
    const echoed = await toolhosts.client("a").callTool({ name: "mcp.tiny.echo", args: { text: "hello" } });
    expect(echoed).toMatchObject({ ok: true, output: expect.stringContaining("hello") });
    const live = await get("/v1/agents/a/mcp");
    expect(live.json.data).toMatchObject({ agentId: "a", running: true, botAttached: true });
    const [tiny, docs] = live.json.data.servers;
    expect(tiny).toMatchObject({ name: "tiny", transport: "stdio", state: "running", restarts: 0 });
    expect(tiny.configured).toEqual({ command: process.execPath });
    expect(tiny.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(
      expect.arrayContaining([expect.stringMatching(/echo$/), expect.stringMatching(/token_set$/)]),
    );
    expect(docs).toMatchObject({ name: "docs", transport: "http", configured: { urlHost: "mcp.example.test:8443" } });
    expectNoSecrets(live.text);
    expect(logLines.join("\n")).not.toContain(SECRETS.FAKE_MCP_TOKEN);
  }, 30_000);
});
