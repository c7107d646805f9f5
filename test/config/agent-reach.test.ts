/**
 * agents.json's reach: `network` in its three forms and `mcpServers` in Claude Desktop's
 * shape, checked at load (a bad entry names the agent and the key), `$NAME`s resolved at
 * start (an unset one names the variable), and what start-up can say before a server runs.
 */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { parseAgents } from "../../src/config/agents.js";
import { resolveMcpServer } from "../../src/config/agent-reach.js";
import { configuredSecrets } from "../../src/log/configured-secrets.js";
import { openAgentReach } from "../../src/runtime/agent-reach.js";
import type { Config } from "../../src/config/load-config.js";
import type { RuntimeLayout } from "../../src/config/runtime-layout.js";

const agentsText = (agent: Record<string, unknown>) =>
  JSON.stringify({ agents: [{ id: "a", name: "A", ...agent }] }, null, 2);
const parse = (agent: Record<string, unknown>) => parseAgents(agentsText(agent), "configs/agents.json");

describe("agents.json network", () => {
  it("takes false, true and an allow list, and defaults to false", () => {
    expect(parse({})[0]?.network).toBe(false);
    expect(parse({ network: true })[0]?.network).toBe(true);
    expect(parse({ network: { allow: ["api.github.com", "*.corp.example", "10.2.0.0/16:443"] } })[0]?.network).toEqual({
      allow: ["api.github.com", "*.corp.example", "10.2.0.0/16:443"],
    });
  });

  it("names the agent, the key and the entry of a bad pattern", () => {
    expect(() => parse({ network: { allow: ["api.github.com", "10.2.0.1/16"] } })).toThrow(
      /agents\[0\] \(id "a"\).*network\.allow\.1.*10\.2\.0\.1\/16.*did you mean 10\.2\.0\.0\/16/s,
    );
    expect(() => parse({ network: { allow: [] } })).toThrow(/lists no hosts/);
    expect(() => parse({ network: { allow: ["x.test"], deny: ["y.test"] } })).toThrow(/deny/);
    expect(() => parse({ network: "yes" })).toThrow(/network/);
  });
});

describe("agents.json mcpServers", () => {
  it("reads stdio and remote servers with their defaults", () => {
    const [agent] = parse({
      mcpServers: {
        github: { command: "npx", args: ["-y", "@modelcontextprotocol/server-github"], env: { GITHUB_TOKEN: "$GH" } },
        docs: { url: "https://mcp.corp.example/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
        plain: { command: "/usr/bin/true" },
      },
    });
    expect(agent?.mcpServers.plain).toEqual({ command: "/usr/bin/true", args: [], env: {} });
    expect(agent?.mcpServers.docs).toEqual({
      url: "https://mcp.corp.example/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
    });
  });

  it("names the agent, the server and the key that is wrong", () => {
    expect(() => parse({ mcpServers: { github: { command: "npx", argz: [] } } })).toThrow(/mcpServers\.github.*argz/s);
    expect(() => parse({ mcpServers: { docs: { url: "ftp://x.test/mcp" } } })).toThrow(/mcpServers\.docs\.url/);
    expect(() => parse({ mcpServers: { "Bad Name": { command: "x" } } })).toThrow(/server name must match/);
    expect(() => parse({ mcpServers: { fs: { command: "x", cwd: "../b" } } })).toThrow(
      /inside the agent's working tree/,
    );
    expect(() => parse({ mcpServers: { fs: "npx server" } })).toThrow(/"command"/);
    // Arguments are visible to the agent's commands in the process list: a secret goes in env.
    expect(() => parse({ mcpServers: { gh: { command: "x", args: ["--token=$GH_TOKEN"] } } })).toThrow(
      /mcpServers\.gh\.args\.0.*may not name a variable.*pass the value in env/s,
    );
  });

  it("resolves $NAME and ${NAME} from the environment, keeps $$ as a dollar, and names an unset variable", () => {
    const lookup = (name: string) => ({ GH: "ghp_secret1", DOCS_TOKEN: "docs_secret2" })[name];
    const stdio = resolveMcpServer(
      "github",
      { command: "npx", args: ["--price=$$5"], env: { GITHUB_TOKEN: "$GH" }, cwd: "repos" },
      lookup,
      "/w/a",
    );
    expect(stdio.config).toEqual({
      name: "github",
      transport: "stdio",
      command: "npx",
      args: ["--price=$5"],
      env: { GITHUB_TOKEN: "ghp_secret1" },
      cwd: "/w/a/repos",
    });
    expect(stdio.secrets).toEqual(["ghp_secret1"]);
    const remote = resolveMcpServer(
      "docs",
      { url: "https://mcp.corp.example/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
      lookup,
      "/w/a",
    );
    expect(remote.config).toMatchObject({ headers: { Authorization: "Bearer docs_secret2" } });
    expect(() => resolveMcpServer("x", { command: "y", args: [], env: { T: "$NOPE" } }, lookup, "/w/a")).toThrow(
      "mcpServers.x.env.T refers to $NOPE, which is not set in the environment or any env file",
    );
  });

  it("counts the referenced values as secrets for the redactor", () => {
    const agents = parse({ mcpServers: { github: { command: "npx", env: { GITHUB_TOKEN: "$GH" } } } });
    const secrets = configuredSecrets(
      { config: {} as Config, declaredValue: (name) => (name === "GH" ? "ghp_redact_me" : undefined) },
      agents,
    );
    expect(secrets).toContain("ghp_redact_me");
  });
});

describe("openAgentReach", () => {
  const layout = {
    egressHostsFile: undefined,
    agentTrees: (id: string) => ({ workTree: `/w/${id}` }),
  } as unknown as RuntimeLayout;
  const config = {
    MCP_START_TIMEOUT_MS: 30_000,
    TOOLHOST_CALL_TIMEOUT_MS: 60_000,
    ADMIN_PORT: 0,
    FEISHU_WEBHOOK_PORT: 0,
    TOOLHOST_UID_BASE: 20_000,
  } as unknown as Config;
  const logger = pino({ level: "silent" });

  it("stops start-up naming the agent and the unset variable", async () => {
    const agents = parse({ mcpServers: { github: { command: "npx", env: { GITHUB_TOKEN: "$GH_UNSET" } } } });
    await expect(openAgentReach({ config, layout, agents, lookup: () => undefined, logger })).rejects.toThrow(
      /agent "a": mcpServers\.github\.env\.GITHUB_TOKEN refers to \$GH_UNSET/,
    );
  });

  it("warns of a command that is not installed and of a remote server the agent cannot reach", async () => {
    const agents = parse({
      mcpServers: {
        missing: { command: "no-such-mcp-server-cmd" },
        docs: { url: "https://mcp.corp.example/mcp" },
      },
    });
    const reach = await openAgentReach({ config, layout, agents, lookup: () => undefined, logger });
    expect(reach.warnings.join("\n")).toContain('the command "no-such-mcp-server-cmd" is not installed');
    expect(reach.warnings.join("\n")).toContain('add "network": { "allow": ["mcp.corp.example"] }');
    expect(reach.mcp("a")?.servers.map((server) => server.name)).toEqual(["missing", "docs"]);
    expect(reach.egressSocket("a")).toBeUndefined();
    await reach.close();
  });

  it("gives an agent with an allow list its own proxy socket, and none to the others", async () => {
    const agents = parseAgents(
      JSON.stringify({
        agents: [
          { id: "a", name: "A", network: { allow: ["allowed.test"] } },
          { id: "b", name: "B" },
        ],
      }),
      "agents.json",
    );
    const reach = await openAgentReach({ config, layout, agents, lookup: () => undefined, logger, isRoot: false });
    expect(reach.egressSocket("a")).toMatch(/laoding-egress-.*\/a\.sock$/);
    expect(reach.egressSocket("b")).toBeUndefined();
    expect(reach.proxy).toBeDefined();
    await reach.close();
  });
});
