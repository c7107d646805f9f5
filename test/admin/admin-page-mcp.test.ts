/**
 * The admin page's "MCP servers" view in Debian's headless Chromium (playwright-core)
 * against the real admin server, first apart from a bot (configuration only), then with
 * the bot's toolhosts attached: a real toolhost child runs agent a's stdio MCP server (a
 * tiny SDK server in a's working tree). Read-only: state, tool count, last error, the
 * tools behind a disclosure, in English and Chinese, never a secret.
 * Screenshots land in test-output/admin-page/.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
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
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
const TOKEN = "admin-page-mcp-token-0123456789";
const SECRETS = { FAKE_MCP_TOKEN: "fake-mcp-secret-value-0123456789", DOCS_TOKEN: "docs-header-secret-0123456789" };
const SHOTS = join(REAL_REPO_ROOT, "test-output", "admin-page");
let workspace: RealWorkspace;
let admin: LaunchedAdmin;
let browser: BrowserContext;
let page: Page;
let reach: AgentReach | undefined;
let store: Store | undefined;
let pool: MaintenancePool | undefined;
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const row = (server: string) => page.locator(`tr[data-server=${server}]`);

/** A stdio MCP server with the SDK, importing it by absolute path: the jail binds the bot's node_modules at its real path. */
function tinyServer(): string {
  const sdk = join(REAL_REPO_ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm");
  return `import { Server } from ${JSON.stringify(`${sdk}/server/index.js`)};
import { StdioServerTransport } from ${JSON.stringify(`${sdk}/server/stdio.js`)};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(`${sdk}/types.js`)};
const server = new Server({ name: "tiny", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [
  { name: "echo", description: "Returns the text it is given.\\nA second line.", inputSchema: { type: "object", properties: {} } },
  { name: "token_set", description: "Whether FAKE_TOKEN is set.", inputSchema: { type: "object", properties: {} } },
] }));
server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: "ok" }] }));
await server.connect(new StdioServerTransport());
`;
}

/** Whether some page script is newer than its compiled file (or was never compiled). */
function pageIsStale(): boolean {
  const sourceDir = join(REAL_REPO_ROOT, "src/admin/page");
  const compiledDir = join(REAL_REPO_ROOT, "dist/admin-page");
  return readdirSync(sourceDir)
    .filter((name) => name.endsWith(".ts"))
    .some((name) => {
      const compiled = join(compiledDir, name.replace(/\.ts$/, ".js"));
      return !existsSync(compiled) || statSync(compiled).mtimeMs < statSync(join(sourceDir, name)).mtimeMs;
    });
}

describe.skipIf(!hasChromium)("admin page: MCP servers in headless Chromium", () => {
  beforeAll(async () => {
    // The page's scripts are served from dist/admin-page: built now when any source is newer, so the test sees this source.
    if (pageIsStale())
      execFileSync(join(REAL_REPO_ROOT, "node_modules/.bin/tsc"), ["-p", join(REAL_REPO_ROOT, "src/admin/page")], {
        stdio: "inherit",
      });
    mkdirSync(SHOTS, { recursive: true });
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
                env: { FAKE_TOKEN: "$FAKE_MCP_TOKEN" },
              },
              docs: { url: "https://mcp.example.test/mcp?key=abc", headers: { Authorization: "Bearer $DOCS_TOKEN" } },
            },
          },
          { id: "b", name: "B" },
        ],
      }),
    );
    const serverDir = join(workspace.layout.agentTrees("a").workTree, "mcp-tiny");
    mkdirSync(serverDir, { recursive: true });
    writeFileSync(join(serverDir, "server.mjs"), tinyServer());
    giveToAgent(workspace, "a", serverDir);
    admin = (await launchTestAdmin(workspace, { secrets: [TOKEN], logLines: [] })) as LaunchedAdmin;
    // A fresh profile for every run: nothing carried over between runs or from a person's browser.
    browser = await chromium.launchPersistentContext(tempDir("laoding-chromium-", "file"), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15_000);
    await page.goto(`${admin.url}/`);
    await page.fill("#token", TOKEN);
    await page.keyboard.press("Enter");
    await page.locator("tr[data-agent=a]").waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await admin?.close();
    await pool?.close();
    await store?.close();
    await reach?.close();
  });

  it("apart from a bot: each server with its command or host, not started, and a notice saying why", async () => {
    await page.click("tr[data-agent=a] >> text=MCP");
    await row("tiny").waitFor();
    expect(await page.locator("h1").textContent()).toBe("MCP servers · a");
    expect(await row("tiny").locator("td").first().textContent()).toBe(`tiny stdio${process.execPath}`);
    expect(await row("docs").locator("td").first().textContent()).toBe("docs httpmcp.example.test");
    expect(await row("tiny").locator(".mcp-state").textContent()).toBe("not started");
    expect(await row("tiny").locator(".mcp-tools").textContent()).toBe("0 tools");
    expect(await page.locator("#mcp-notice").textContent()).toContain("runs apart from the bot");
    expect(await page.content()).not.toContain("key=abc");
    await shot("mcp-detached");
    await page.goto(`${admin.url}/#/mcp/b`);
    await page.locator(".mcp-none").waitFor();
    expect(await page.locator(".mcp-none").textContent()).toContain("This agent has no MCP servers");
  }, 30_000);

  it("with the bot's toolhosts: live state, tool names behind a disclosure, the last error; in Chinese too", async () => {
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
    await toolhosts.client("a").listTools({ refresh: true });

    await page.goto(`${admin.url}/#/mcp/a`);
    await expect.poll(() => row("tiny").locator(".mcp-state").textContent()).toBe("running");
    expect(await page.locator("#mcp-notice").count()).toBe(0);
    const tools = row("tiny").locator(".mcp-tools details");
    expect(await tools.locator("summary").textContent()).toBe("2 tools");
    expect(await tools.locator("li").first().isVisible()).toBe(false);
    await tools.locator("summary").click();
    expect(await tools.locator("li").allTextContents()).toEqual([
      "mcp.tiny.echo Returns the text it is given.",
      "mcp.tiny.token_set Whether FAKE_TOKEN is set.",
    ]);
    expect(await row("tiny").locator(".mcp-restarts").textContent()).toBe("0");
    // A remote server without network: failed, with its last error and when.
    expect(await row("docs").locator(".mcp-state").textContent()).toBe("failed");
    expect(await row("docs").locator(".mcp-error .error").textContent()).toContain("no network");
    expect(await row("docs").locator(".mcp-error .muted").count()).toBe(1);
    const html = await page.content();
    for (const secret of [...Object.values(SECRETS), "key=abc", "Bearer"]) expect(html).not.toContain(secret);
    await shot("mcp-live");

    await page.selectOption("#locale", "zh");
    await expect.poll(() => page.locator("h1").textContent()).toBe("MCP 服务器 · a");
    expect(await row("tiny").locator(".mcp-state").textContent()).toBe("运行中");
    expect(await row("docs").locator(".mcp-state").textContent()).toBe("失败");
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("MCP 服务器 · a");
    await shot("mcp-live-zh");
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(
      0,
    );
    await shot("mcp-live-zh-375px");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.selectOption("#locale", "en");
  }, 30_000);
});
