/**
 * Issue 26's acceptance, on the real runtime: two agents — `a` with
 * `"network": { "allow": ["allowed.test"] }` and an MCP stdio server (the SDK fake, run
 * inside a's sandbox as a's uid), `b` with no network. Names are made deterministic with
 * EGRESS_HOSTS (allowed.test and refused.test both map to loopback servers). The model is
 * the loopback fake, scripted to call one tool per turn; what the tool answered is read
 * from the next request the model got. In both sandbox modes (bwrap; none as root: the
 * jail's own empty network namespace), and every log line of the bot and the children is
 * searched for the MCP server's secret afterwards.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAgentsFile } from "../../src/config/agents.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createRuntimeLayout } from "../../src/config/runtime-layout.js";
import { openAgentReach } from "../../src/runtime/agent-reach.js";
import { createBotRuntime, type BotRuntime } from "../../src/runtime/bot-runtime.js";
import { prepareToolhostLaunches } from "../../src/runtime/toolhost-launch.js";
import { startMcpHttpServer, type FakeMcpHttpServer } from "../fakes/mcp-http-server.js";
import { isRoutingRequest, routeTo, startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { runLaoding } from "../helpers/cli.js";
import { CLI_ENTRY } from "../helpers/real-toolhost.js";
import { fakeRepo, REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const SECRET = "mcpSeCrEt-4be1f07d9c";
const REMOTE_SECRET = "remoteSeCrEt-77a0c3e519";
const FAKES = join(REAL_REPO_ROOT, "test", "fakes");
const TSX = new URL(import.meta.resolve("tsx")).pathname;
const isRoot = process.getuid?.() === 0;

type Bot = {
  runtime: BotRuntime;
  fake: FakeOpenAI;
  logFile: string;
  childLog: string;
  bFile: string;
  ports: { allowed: number; refused: number; admin: number };
  remote: FakeMcpHttpServer;
  close(): Promise<void>;
};

async function listen(body: string): Promise<Server> {
  const server = createServer((_request, response) => response.end(body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

async function startBot(mode: "bwrap" | "none"): Promise<Bot> {
  const repoRoot = fakeRepo({ scope: "file" });
  const workspaceDir = join(tempDir("laoding-reach-", "file"), "rt");
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  if (seeded.code !== 0) throw new Error(seeded.stderr);
  const allowed = await listen("hello from allowed.test");
  const refused = await listen("you should never read this");
  const admin = await listen("the admin API");
  const fake = await startFakeOpenAI();
  const remote = await startMcpHttpServer({ token: REMOTE_SECRET });
  const remotePort = new URL(remote.url).port;
  writeFileSync(join(workspaceDir, "configs/egress-hosts"), "# test names\n127.0.0.1 allowed.test refused.test\n");
  const settings = {
    LLM_BASE_URL: fake.url,
    LLM_MODEL: "fake-model",
    LLM_API_KEY: "sk-test-key",
    LLM_MAX_RETRIES: "0",
    TOOLHOST_SANDBOX: mode,
    EGRESS_HOSTS: "configs/egress-hosts",
    ALLOWED_COMMANDS: "curl,cat,ls,echo,node",
    ALLOWED_DIRS: FAKES,
    ADMIN_PORT: String(portOf(admin)),
    ADMIN_TOKEN: "admin-token-for-the-test",
    REACT_MAX_STEPS: "4",
    BOT_LOCALE: "en",
    LOG_LEVEL: "debug",
    FAKE_MCP_TOKEN: SECRET,
    REMOTE_MCP_TOKEN: REMOTE_SECRET,
  };
  writeFileSync(
    join(workspaceDir, "configs/env"),
    `${Object.entries(settings)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n")}\n`,
  );
  writeFileSync(
    join(workspaceDir, "configs/agents.json"),
    JSON.stringify({
      agents: [
        {
          id: "a",
          name: "A",
          network: { allow: ["allowed.test"] },
          mcpServers: {
            fake: {
              command: process.execPath,
              args: ["--import", TSX, join(FAKES, "mcp-stdio-server.ts")],
              env: { FAKE_TOKEN: "$FAKE_MCP_TOKEN" },
            },
            // Streamable HTTP through a's proxy: its host is on the list; the other's is not.
            remote: {
              url: `http://allowed.test:${remotePort}/mcp`,
              headers: { Authorization: "Bearer $REMOTE_MCP_TOKEN" },
            },
            blocked: { url: `http://refused.test:${remotePort}/mcp` },
          },
        },
        { id: "b", name: "B" },
      ],
    }),
  );
  const loaded = loadConfig({ env: {}, repoRoot, cwd: repoRoot, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  const logFile = join(workspaceDir, "bot.log");
  const childLog = join(workspaceDir, "children.log");
  const logger = pino({ level: "debug" }, pino.destination({ dest: logFile, sync: true }));
  const childFd = openSync(childLog, "a");
  const reach = await openAgentReach({
    config: loaded.config,
    layout,
    agents,
    lookup: (name) => loaded.declaredValue(name),
    logger,
  });
  const launches = prepareToolhostLaunches({ config: loaded.config, layout, agents, cliEntry: CLI_ENTRY, reach });
  const runtime = await createBotRuntime({
    loaded,
    layout,
    agents,
    logger,
    cliEntry: CLI_ENTRY,
    launches,
    reach,
    childStderr: () => childFd,
    watchSkills: false,
  });
  // A file of b's that a's tools must never read.
  const bTree = layout.agentTrees("b").workTree;
  mkdirSync(bTree, { recursive: true });
  const bFile = join(bTree, "b-private.txt");
  writeFileSync(bFile, "b's private notes");
  return {
    runtime,
    fake,
    logFile,
    childLog,
    bFile,
    ports: { allowed: portOf(allowed), refused: portOf(refused), admin: portOf(admin) },
    remote,
    async close() {
      await runtime.close();
      await fake.close();
      await remote.close();
      for (const server of [allowed, refused, admin]) server.close();
      closeSync(childFd);
    },
  };
}

let turn = 0;
/** One turn in which the model calls `tool` once: what the tool answered, as the model read it. */
async function callTool(
  bot: Bot,
  agentId: string,
  tool: string,
  args: Record<string, unknown>,
  chatId?: string,
): Promise<string> {
  const before = bot.fake.requests.length;
  bot.fake.respond((request) => {
    if (isRoutingRequest(request)) return routeTo([], "reach-check");
    const last = request.messages.at(-1);
    return last?.role === "tool" ? { text: "done" } : { toolCalls: [{ name: tool, arguments: args }] };
  });
  turn += 1;
  await bot.runtime.orchestrator.handle({
    channel: "test",
    chatId: chatId ?? `chat-${turn}`,
    userId: "u1",
    messageId: `m${turn}`,
    text: `please use ${tool}`,
    agentId,
    isOperator: true,
  });
  const answered = bot.fake.requests.slice(before).find((request) => request.messages.at(-1)?.role === "tool");
  if (!answered) {
    const offered = bot.fake.requests.at(-1)?.tools?.map((spec) => spec.function.name) ?? [];
    throw new Error(`the model never got ${tool}'s answer; tools offered: ${offered.join(", ")}`);
  }
  return answered.messages.at(-1)?.content ?? "";
}

const modes = (["bwrap", "none"] as const).filter((mode) => mode === "bwrap" || isRoot);

describe.each(modes)("reach in %s mode", (mode) => {
  let bot: Bot;
  beforeAll(async () => {
    bot = await startBot(mode);
  }, 60_000);
  afterAll(async () => {
    await bot?.close();
  });

  it("a's curl reaches allowed.test through the proxy and is refused elsewhere, the bot's admin port included", async () => {
    const reached = await callTool(bot, "a", "shell_exec", {
      command: `curl -sS http://allowed.test:${bot.ports.allowed}/`,
    });
    expect(reached).toContain("hello from allowed.test");

    const elsewhere = await callTool(bot, "a", "shell_exec", {
      command: `curl -sS http://refused.test:${bot.ports.refused}/`,
    });
    expect(elsewhere).toMatch(
      /^ERROR_CODE=NETWORK_REFUSED; TOOL=shell\.exec; REASON=refused\.test is not on this agent's network allow list/,
    );

    const adminByName = await callTool(bot, "a", "shell_exec", {
      command: `curl -sS http://allowed.test:${bot.ports.admin}/`,
    });
    expect(adminByName).toContain("NETWORK_REFUSED");
    expect(adminByName).toContain("one of the bot's own endpoints (admin)");
    const adminByAddress = await callTool(bot, "a", "shell_exec", {
      command: `curl -sS http://127.0.0.1:${bot.ports.admin}/`,
    });
    // An address literal must itself be on the list, whatever it points at.
    expect(adminByAddress).toContain("REASON=127.0.0.1 is not on this agent's network allow list");
    expect(adminByAddress).not.toContain("the admin API");
    // HTTPS goes through CONNECT: refused the same way, before any byte reaches the host.
    const tunnel = await callTool(bot, "a", "shell_exec", {
      command: `curl -sS https://refused.test:${bot.ports.refused}/`,
    });
    expect(tunnel).toContain("NETWORK_REFUSED");
  });

  it("a Node program's own fetch goes through the proxy too (Node 20's fetch ignores HTTP_PROXY by itself)", async () => {
    const source = `const [host, port] = process.argv.slice(2);
fetch("http://" + host + ":" + port + "/").then((r) => r.text()).then(console.log, (e) => { console.log("failed", e.cause?.code); process.exit(3); });
`;
    await callTool(bot, "a", "file_write", { path: "fetch.mjs", content: source }, "node-chat");
    const run = (host: string, port: number) =>
      callTool(bot, "a", "shell_exec", { command: `node fetch.mjs ${host} ${port}` }, "node-chat");
    expect(await run("allowed.test", bot.ports.allowed)).toContain("hello from allowed.test");
    expect(await run("refused.test", bot.ports.refused)).toContain(
      "ERROR_CODE=NETWORK_REFUSED; TOOL=shell.exec; REASON=refused.test is not on this agent's network allow list",
    );
  });

  it("a's web.fetch reaches allowed.test and is refused elsewhere", async () => {
    const page = await callTool(bot, "a", "web_fetch", { url: `http://allowed.test:${bot.ports.allowed}/` });
    expect(page).toContain("hello from allowed.test");
    const refused = await callTool(bot, "a", "web_fetch", { url: `http://refused.test:${bot.ports.refused}/` });
    expect(refused).toMatch(
      /^ERROR_CODE=NETWORK_REFUSED; TOOL=web\.fetch; REASON=refused\.test is not on this agent's network allow list/,
    );
  });

  it("b reaches nothing: no web.fetch, and its curl finds no network at all", async () => {
    const direct = await callTool(bot, "b", "shell_exec", {
      command: `curl -sS --max-time 5 http://127.0.0.1:${bot.ports.allowed}/`,
    });
    expect(direct).toContain("ERROR_CODE=EXIT_NONZERO");
    expect(direct).not.toContain("hello from allowed.test");
    const offered = bot.fake.requests.at(-1)?.tools?.map((spec) => spec.function.name) ?? [];
    expect(offered).toContain("shell_exec");
    expect(offered).not.toContain("web_fetch");
    expect(offered.some((name) => name.startsWith("mcp_"))).toBe(false);
  });

  it("a's MCP server runs in a's sandbox with its secret, and cannot read b's files", async () => {
    expect(await callTool(bot, "a", "mcp_fake_echo", { text: "ping through the sandbox" })).toContain(
      "ping through the sandbox",
    );
    expect(await callTool(bot, "a", "mcp_fake_env", { name: "FAKE_TOKEN" })).toMatch(/\bset\b/);
    const stolen = await callTool(bot, "a", "mcp_fake_read_file", { path: bot.bFile });
    expect(stolen).not.toContain("b's private notes");
    expect(stolen).toContain("ERROR_CODE=MCP_TOOL_ERROR");
    // The server's own network goes through a's proxy like a's commands: allowed.test is
    // reached, refused.test is refused by the proxy (not by a missing route).
    const reached = await callTool(bot, "a", "mcp_fake_fetch_url", {
      url: `http://allowed.test:${bot.ports.allowed}/`,
    });
    expect(reached).toContain("hello from allowed.test");
    const fetched = await callTool(bot, "a", "mcp_fake_fetch_url", {
      url: `http://refused.test:${bot.ports.refused}/`,
    });
    expect(fetched).not.toContain("you should never read this");
    expect(fetched).toContain("refused.test is not on this agent's network allow list");
  });

  it("a's remote MCP server answers over Streamable HTTP through the proxy; one on a refused host is named in /context", async () => {
    expect(await callTool(bot, "a", "mcp_remote_echo", { text: "over http" }, "context-chat")).toContain("over http");
    expect(bot.remote.calls()).toBeGreaterThan(0);
    expect(bot.remote.refused()).toBe(0);
    turn += 1;
    const context = await bot.runtime.orchestrator.handle({
      channel: "test",
      chatId: "context-chat",
      userId: "u1",
      messageId: `m${turn}`,
      text: "/context",
      agentId: "a",
      isOperator: true,
    });
    expect(context).toMatch(
      /MCP server blocked is not available \(\w+\): .*refused\.test is not on this agent's network allow list/,
    );
    expect(context).not.toContain("MCP server remote is not available");
  });

  it("the MCP server's secret never reaches a log, and the proxy logged its connections", () => {
    const logs = readFileSync(bot.logFile, "utf8") + readFileSync(bot.childLog, "utf8");
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(REMOTE_SECRET);
    const connections = readFileSync(bot.logFile, "utf8")
      .split("\n")
      .filter((line) => line.includes('"egress connection"'))
      .map((line) => JSON.parse(line) as { agentId: string; host: string; allowed: boolean });
    expect(connections.some((entry) => entry.agentId === "a" && entry.host === "allowed.test" && entry.allowed)).toBe(
      true,
    );
    expect(connections.some((entry) => entry.agentId === "a" && entry.host === "refused.test" && !entry.allowed)).toBe(
      true,
    );
  });
});
