/**
 * Reach benchmark (issue 26): what the egress proxy adds to web.fetch, and what an MCP
 * tool call costs through the toolhost child against the same server called directly.
 *
 * 1. web.fetch of a 100 KiB HTML page from a loopback origin, in this process: through the
 *    real egress proxy (its Unix socket, `page.test` mapped to 127.0.0.1 as EGRESS_HOSTS
 *    does) against the same tool on `directFetch`; and the raw fetch alone (body read, no
 *    Markdown) both ways, so the proxy's own cost shows apart from the conversion.
 * 2. `echo` of the fake stdio MCP server (test/fakes/mcp-stdio-server.ts) through the real
 *    child from dist/ (launch planned by the product, `mcp.configure` sent by the bot's own
 *    pool factory, an audit row per call) against the SDK's Client on its own transport.
 *
 * Subjects alternate within each round and the figures are medians over the rounds: on a
 * shared 2-core machine only figures taken side by side compare.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { pino } from "pino";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { parseAllowList } from "../src/egress/allow-list.js";
import { parseEgressHosts } from "../src/egress/egress-hosts.js";
import { startEgressProxy } from "../src/egress/egress-proxy.js";
import { openAgentReach } from "../src/runtime/agent-reach.js";
import { prepareToolhostLaunches } from "../src/runtime/toolhost-launch.js";
import { createToolhostPool } from "../src/runtime/toolhost-pool-factory.js";
import { systemClock } from "../src/store/clock.js";
import { openStore } from "../src/store/store.js";
import { createProxiedFetch, directFetch, type FetchLike } from "../src/toolhost/net/proxied-fetch.js";
import { DEFAULT_TOOL_LIMITS, type ToolContext } from "../src/toolhost/tools/define-tool.js";
import { createWebFetchTool } from "../src/toolhost/tools/web-fetch.js";
import { childrenOf, formatMs, percentile, throughput } from "./stats.js";
import { seedWorkspace } from "./toolhost-bench.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, "dist/cli/main.js");
const FAKE_SERVER = join(ROOT, "test/fakes/mcp-stdio-server.ts");
const TSX = fileURLToPath(import.meta.resolve("tsx"));
const PAGE_BYTES = 100 * 1024;
const ROUNDS = 3;
/** Calls per subject per round; subjects alternate call by call. */
const TOOL_CALLS = 60;
const RAW_CALLS = 400;
const WARMUP_CALLS = 20;
const MCP_CALLS = { 1: 1_000, 8: 2_000 } as const;
const MCP_WARMUP = 1_000;
/** Each subject's calls of a round come in this many slices, the subjects taking turns. */
const MCP_SLICES = 4;
const ADDED_GOAL_MS = 5;
const MCP_RATIO_GOAL = 0.8;

function progress(message: string): void {
  process.stderr.write(`  reach bench: ${message}\n`);
}

const median = (values: number[]) => percentile(values, 50);

// ---------------------------------------------------------------------------
// Part 1: web.fetch through the egress proxy vs direct

/** A deterministic article page of at least `bytes`: head, navigation, sections of prose, lists, a table, code. */
function articlePage(bytes: number): string {
  const words =
    "the team keeps its deploy notes here so that anyone on call can find the steps the runbook the dashboards and the people to ask when a release goes wrong".split(
      " ",
    );
  const sentence = (seed: number, length: number) => {
    const picked = Array.from({ length }, (_, index) => words[(seed * 7 + index * 3) % words.length]);
    const text = picked.join(" ");
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  };
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Deploy notes: the release checklist</title><style>${"body{font:16px sans-serif}.nav a{margin:0 4px}".repeat(20)}</style><script>${"window.analytics=window.analytics||[];".repeat(30)}</script></head><body><header class="nav">${Array.from({ length: 30 }, (_, index) => `<a href="/section/${index}">Section ${index}</a>`).join("")}</header><main><article><h1>Deploy notes: the release checklist</h1>`;
  const tail = `</article></main><footer><p>Maintained by the platform team.</p></footer></body></html>`;
  const sections: string[] = [];
  let size = head.length + tail.length;
  for (let index = 0; size < bytes; index += 1) {
    const section = [
      `<h2 id="s${index}">Step ${index + 1}: ${sentence(index, 4)}</h2>`,
      `<p>${sentence(index, 28)} See <a href="https://wiki.example/runbook/${index}">runbook ${index}</a> and <em>${sentence(index + 1, 6)}</em> ${sentence(index + 2, 22)}</p>`,
      `<p>${sentence(index + 3, 35)} <strong>${sentence(index + 4, 5)}</strong> ${sentence(index + 5, 18)}</p>`,
      `<ul>${Array.from({ length: 4 }, (_, item) => `<li>${sentence(index + item, 9)}</li>`).join("")}</ul>`,
      index % 3 === 0
        ? `<table><tr><th>Service</th><th>Owner</th><th>Window</th></tr>${Array.from({ length: 3 }, (_, row) => `<tr><td>svc-${index}-${row}</td><td>team ${row}</td><td>${10 + row}:00</td></tr>`).join("")}</table>`
        : `<pre><code>kubectl rollout status deploy/app-${index} --timeout=120s\nkubectl get pods -l app=app-${index}</code></pre>`,
    ].join("");
    sections.push(section);
    size += section.length;
  }
  return `${head}${sections.join("")}${tail}`;
}

type Origin = { port: number; close(): Promise<void> };

async function startPageOrigin(page: Buffer): Promise<Origin> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": page.length });
    response.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The context the child gives a tool, with the bot's default limits (TOOL_OUTPUT_MAX_BYTES, SHELL_*_TIMEOUT_MS). */
function toolContext(): ToolContext {
  return {
    cwd: "/",
    sandbox: undefined as never,
    shell: undefined as never,
    limits: { ...DEFAULT_TOOL_LIMITS, outputMaxBytes: 40_000, shellTimeoutMs: 30_000, shellMaxTimeoutMs: 300_000 },
    signal: new AbortController().signal,
  };
}

type LatencyFigures = { p50: number; p95: number; cpuMs: number };
type Comparison = { proxied: LatencyFigures; direct: LatencyFigures; addedP50: number; addedRounds: number[] };
type WebFigures = { tool: Comparison; raw: Comparison; markdownChars: number; otherCores: number };

/** One side's latencies and CPU (this process: client, proxy and origin all run here) per call, ms. */
type Side = { times: number[]; cpu: number[] };

/** `calls` of A and of B, alternating call by call (B first in odd rounds). */
async function alternate(
  calls: number,
  round: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[Side, Side]> {
  const sides: [Side, Side] = [
    { times: [], cpu: [] },
    { times: [], cpu: [] },
  ];
  const order = round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
  const runs = [a, b] as const;
  for (let index = 0; index < calls; index += 1)
    for (const side of order) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      await runs[side]();
      sides[side].times.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      sides[side].cpu.push((used.user + used.system) / 1000);
    }
  return sides;
}

/** Medians over rounds of each side's p50, p95 and mean CPU, and of the per-round difference of the p50s. */
function compare(rounds: Array<[Side, Side]>): Comparison {
  const figures = (side: 0 | 1): LatencyFigures => ({
    p50: median(rounds.map((round) => percentile(round[side].times, 50))),
    p95: median(rounds.map((round) => percentile(round[side].times, 95))),
    cpuMs: median(rounds.map((round) => mean(round[side].cpu))),
  });
  const addedRounds = rounds.map((round) => percentile(round[0].times, 50) - percentile(round[1].times, 50));
  return { proxied: figures(0), direct: figures(1), addedP50: median(addedRounds), addedRounds };
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function benchWebFetch(): Promise<WebFigures> {
  const page = Buffer.from(articlePage(PAGE_BYTES));
  const origin = await startPageOrigin(page);
  const dir = mkdtempSync(join(tmpdir(), "laoding-reach-bench-"));
  // The bot logs every connection at info; the line is written (to /dev/null), as the bot pays for it.
  const proxy = startEgressProxy({
    socketDir: join(dir, "sockets"),
    hosts: parseEgressHosts("127.0.0.1 page.test\n", "bench EGRESS_HOSTS"),
    ownEndpoints: [],
    logger: pino({ level: "info" }, pino.destination({ dest: "/dev/null", sync: true })),
    lookup: async (name) =>
      Promise.reject(Object.assign(new Error(`${name} is not in EGRESS_HOSTS`), { code: "ENOTFOUND" })),
  });
  try {
    const socketPath = await proxy.addAgent({ agentId: "bench", allow: parseAllowList(["page.test"]) });
    const proxiedFetch = createProxiedFetch({ socketPath });
    const proxiedUrl = `http://page.test:${origin.port}/notes`;
    const directUrl = `http://127.0.0.1:${origin.port}/notes`;
    const proxiedTool = createWebFetchTool({ fetch: proxiedFetch });
    const directTool = createWebFetchTool({ fetch: directFetch });
    let markdownChars = 0;
    const runTool = (tool: typeof proxiedTool, url: string) => async () => {
      const result = await tool.execute({ url }, toolContext());
      if (!result.output.startsWith("# Deploy notes"))
        throw new Error(`web.fetch answered: ${result.output.slice(0, 300)}`);
      markdownChars = result.output.length;
    };
    const runRaw = (fetch: FetchLike, url: string) => async () => {
      const response = await fetch(url);
      const body = await response.arrayBuffer();
      if (response.status !== 200 || body.byteLength !== page.length)
        throw new Error(`raw fetch of ${url}: ${response.status}, ${body.byteLength} bytes`);
    };
    const tool = [runTool(proxiedTool, proxiedUrl), runTool(directTool, directUrl)] as const;
    const raw = [runRaw(proxiedFetch, proxiedUrl), runRaw(directFetch, directUrl)] as const;
    progress(`web.fetch warm-up (page of ${page.length} bytes)`);
    await alternate(WARMUP_CALLS, 0, ...tool);
    await alternate(WARMUP_CALLS * 5, 0, ...raw);
    const toolRounds: Array<[Side, Side]> = [];
    const rawRounds: Array<[Side, Side]> = [];
    const load = startLoadWatch();
    for (let round = 0; round < ROUNDS; round += 1) {
      progress(`web.fetch round ${round + 1} of ${ROUNDS}`);
      toolRounds.push(await alternate(TOOL_CALLS, round, ...tool));
      rawRounds.push(await alternate(RAW_CALLS, round, ...raw));
    }
    const otherCores = load.otherCores();
    const stats = proxy.stats("bench");
    if (stats === undefined || stats.refused > 0 || stats.failed > 0)
      throw new Error(`the proxy refused or failed connections: ${JSON.stringify(stats)}`);
    return { tool: compare(toolRounds), raw: compare(rawRounds), markdownChars, otherCores };
  } finally {
    await proxy.close();
    await origin.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Part 2: an MCP tool call through the toolhost child vs the SDK client directly

/** CPU per call, µs: this process (the caller's side), the toolhost child (its tree without the server), the MCP server. */
type CallCpu = { caller: number; child: number; server: number };

type Caller = {
  name: string;
  call(): Promise<void>;
  /** The processes to account: the toolhost child's (none for the direct client) and the MCP server's. */
  pids(): { child?: number; server?: number };
  close(): Promise<void>;
};

const ECHO_TEXT = "bench ping";

function fakeServerArgs(): string[] {
  return ["--import", TSX, FAKE_SERVER];
}

async function directCaller(): Promise<Caller> {
  const client = new Client({ name: "reach-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: process.execPath, args: fakeServerArgs(), stderr: "inherit" });
  await client.connect(transport);
  return {
    name: "SDK Client → fake server (direct)",
    async call() {
      const result = await client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } });
      if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
    },
    pids: () => ({ ...(transport.pid !== null ? { server: transport.pid } : {}) }),
    close: () => client.close(),
  };
}

/** The child as the bot starts it: agents.json with the server, the reach opened, launches planned, the bot's pool factory. */
async function childCaller(sandbox: "bwrap" | "none"): Promise<Caller & { tools: string[]; ping: Caller }> {
  const { workspaceDir, file } = await seedWorkspace(sandbox);
  // The jail shows the fake server's folder (as an operator lists a server's install folder); node_modules is the bot's own.
  // LOG_LEVEL=error: the child warns once about a tool of the fake that it skips on purpose.
  writeFileSync(
    join(workspaceDir, "configs/env"),
    `REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=${sandbox}\nLOG_LEVEL=error\nALLOWED_DIRS=${dirname(FAKE_SERVER)}\n`,
  );
  writeFileSync(
    join(workspaceDir, "configs/agents.json"),
    JSON.stringify({
      agents: [
        { id: "main", name: "Laoding", mcpServers: { fake: { command: process.execPath, args: fakeServerArgs() } } },
      ],
    }),
  );
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  const agents = readAgentsFile(layout.agentsFile);
  const logger = pino({ level: "error" });
  const reach = await openAgentReach({
    config: loaded.config,
    layout,
    agents,
    lookup: (name) => loaded.declaredValue(name),
    logger,
  });
  for (const warning of reach.warnings) progress(`warning: ${warning}`);
  const launches = prepareToolhostLaunches({ config: loaded.config, layout, agents, cliEntry: ENTRY, reach });
  const store = await openStore(join(workspaceDir, "..", "audit.db"), systemClock);
  const pool = createToolhostPool({ config: loaded.config, launches, store, logger });
  const client = pool.client("main");
  // Every call of the bot names its chat's folder as the working folder.
  const chatCwd = join(dirname(file), "bench-c1");
  const tools = (await client.listTools({ refresh: true })).map((tool) => tool.name);
  const pids = () => {
    const child = client.supervisor.pid;
    if (child === undefined) return {};
    const server = descendants(child).find((pid) => commandLine(pid).includes("mcp-stdio-server"));
    return { child, ...(server !== undefined ? { server } : {}) };
  };
  return {
    name: `laoding toolhost child (${sandbox}) → fake server`,
    tools,
    // The hop to the child alone: what the bot's client and the child cost before any MCP work.
    ping: {
      name: `ping of the toolhost child (${sandbox}): the extra hop alone`,
      call: async () => {
        await client.ping();
      },
      pids,
      close: async () => {},
    },
    async call() {
      const result = await client.callTool({
        name: "mcp.fake.echo",
        args: { text: ECHO_TEXT },
        traceId: "bench",
        cwd: chatCwd,
      });
      if (!result.ok) throw new Error(`mcp.fake.echo through the child failed: ${JSON.stringify(result)}`);
    },
    pids,
    async close() {
      await pool.stopAll();
      await store.close();
      await reach.close();
      rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
    },
  };
}

/** Runs `total` calls at `concurrency`; the seconds it took and the CPU seconds each process spent meanwhile. */
async function measureCalls(
  caller: Caller,
  total: number,
  concurrency: number,
): Promise<{ seconds: number; cpu: CallCpu }> {
  const { child, server } = caller.pids();
  // The server's tree: under the child it is wrapped (bwrap, its init), directly it has tsx's esbuild beside it.
  const serverCpu = () => (server === undefined ? 0 : treeCpu(server));
  // The child's tree holds the server's: counted apart.
  const childCpu = () => (child === undefined ? 0 : treeCpu(child) - serverCpu());
  const before = { caller: process.cpuUsage(), child: childCpu(), server: serverCpu() };
  const rate = await throughput(total, concurrency, () => caller.call());
  const own = process.cpuUsage(before.caller);
  return {
    seconds: total / rate,
    cpu: {
      caller: (own.user + own.system) / 1e6,
      child: childCpu() - before.child,
      server: serverCpu() - before.server,
    },
  };
}

type McpRow = { name: string; c1: number[]; c8: number[]; cpu1: CallCpu[]; cpu8: CallCpu[] };
type McpFigures = { rows: McpRow[]; otherCores: number; unavailable?: string };

async function benchMcp(sandboxes: Array<"bwrap" | "none">): Promise<McpFigures> {
  const callers: Caller[] = [];
  try {
    progress("MCP: starting the direct client and the children");
    callers.push(await directCaller());
    const pings: Caller[] = [];
    for (const sandbox of sandboxes) {
      const child = await childCaller(sandbox);
      callers.push(child);
      pings.push(child.ping);
      if (!child.tools.includes("mcp.fake.echo"))
        return {
          rows: [],
          otherCores: 0,
          unavailable: `the child (${sandbox}) lists no mcp.fake.echo (its tools: ${child.tools.join(", ")})`,
        };
    }
    // Only the first child's ping: the hop costs the same in both modes (bench/README.md's toolhost table).
    callers.push(...pings.slice(0, 1));
    // The child starts its server on the first call (lazily): warm every path up first.
    for (const caller of callers) await throughput(MCP_WARMUP, 1, () => caller.call());
    const rows: McpRow[] = callers.map((caller) => ({ name: caller.name, c1: [], c8: [], cpu1: [], cpu8: [] }));
    const load = startLoadWatch();
    for (let round = 0; round < ROUNDS; round += 1) {
      progress(`MCP round ${round + 1} of ${ROUNDS}`);
      for (const concurrency of [1, 8] as const) {
        const sums = callers.map(() => ({ seconds: 0, cpu: { caller: 0, child: 0, server: 0 } }));
        const perSlice = MCP_CALLS[concurrency] / MCP_SLICES;
        // Slices of each subject in turn, the order rotating, so the machine's moods fall on all of them alike.
        for (let slice = 0; slice < MCP_SLICES; slice += 1)
          for (let turn = 0; turn < callers.length; turn += 1) {
            const index = (turn + slice + round) % callers.length;
            const measured = await measureCalls(callers[index] as Caller, perSlice, concurrency);
            const sum = sums[index] as (typeof sums)[number];
            sum.seconds += measured.seconds;
            sum.cpu.caller += measured.cpu.caller;
            sum.cpu.child += measured.cpu.child;
            sum.cpu.server += measured.cpu.server;
          }
        sums.forEach((sum, index) => {
          const row = rows[index] as McpRow;
          const calls = MCP_CALLS[concurrency];
          const microseconds = (seconds: number) => (seconds * 1e6) / calls;
          row[concurrency === 1 ? "c1" : "c8"].push(calls / sum.seconds);
          row[concurrency === 1 ? "cpu1" : "cpu8"].push({
            caller: microseconds(sum.cpu.caller),
            child: microseconds(sum.cpu.child),
            server: microseconds(sum.cpu.server),
          });
        });
      }
    }
    return { rows, otherCores: load.otherCores() };
  } finally {
    await Promise.all(callers.map((caller) => caller.close()));
  }
}

// ---------------------------------------------------------------------------
// The machine: other sessions share these 2 cores; their load is measured and reported

const TICKS = 100;
const QUIET_CORES = 0.25;
const QUIET_WAIT_MS = 5_000;

/** utime+stime (+ waited-for children's) of one process, in seconds. */
function processCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields.slice(11, 15).reduce((sum, value) => sum + Number(value), 0) / TICKS;
  } catch {
    return 0;
  }
}

function treeCpu(pid: number): number {
  return processCpu(pid) + childrenOf(pid).reduce((sum, child) => sum + treeCpu(child), 0);
}

function descendants(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendants(child)]);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Busy time of every core of the machine, in seconds. */
function machineCpu(): number {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / TICKS;
}

/** From now: how many cores work other than this process's tree took, on average. */
function startLoadWatch(): { otherCores(): number } {
  const started = { at: performance.now(), machine: machineCpu(), ours: treeCpu(process.pid) };
  return {
    otherCores() {
      const seconds = (performance.now() - started.at) / 1000;
      const other = machineCpu() - started.machine - (treeCpu(process.pid) - started.ours);
      return Math.max(0, other) / seconds;
    },
  };
}

/** Waits up to QUIET_WAIT_MS for a second in which other work took at most QUIET_CORES; returns the last second's figure. */
async function waitForQuiet(): Promise<number> {
  const started = Date.now();
  let busy = Number.NaN;
  while (Date.now() - started < QUIET_WAIT_MS) {
    const load = startLoadWatch();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    busy = load.otherCores();
    if (busy <= QUIET_CORES) break;
  }
  return busy;
}

// ---------------------------------------------------------------------------

function verdict(met: boolean): string {
  return met ? "**met**" : "**not met**";
}

function loadNote(otherCores: number, quietBefore: number): string {
  return `Other work on the machine (other sessions' builds and tests) took ${otherCores.toFixed(2)} of the 2 cores on average during these rounds (${quietBefore.toFixed(2)} in the last second before them).`;
}

function webSection(web: WebFigures, quietBefore: number): string[] {
  const row = (name: string, figures: LatencyFigures) =>
    `| ${name} | ${formatMs(figures.p50)} | ${formatMs(figures.p95)} | ${formatMs(figures.cpuMs)} |`;
  const signed = (value: number) => (value < 0 ? `−${formatMs(-value)}` : formatMs(value));
  const rounds = (values: number[]) => values.map(signed).join(", ");
  return [
    `### web.fetch of a ${PAGE_BYTES / 1024} KiB HTML page, egress proxy vs direct`,
    "",
    `In this process: \`createWebFetchTool(...).execute(args, context)\` with the bot's default limits, through the real egress proxy (\`startEgressProxy\`, its Unix socket, \`page.test\` mapped to 127.0.0.1 as EGRESS_HOSTS maps it, the agent's allow list \`["page.test"]\`, each connection logged at info to /dev/null) with \`createProxiedFetch({ socketPath })\`, against the same tool on \`directFetch\` (Node's fetch, keep-alive) to 127.0.0.1. The origin is a loopback HTTP server in this process answering a ${PAGE_BYTES / 1024} KiB article page (Markdown out: ${web.markdownChars} characters, cut to the 40,000-byte output cap). Client, proxy and origin share this one process and thread, so *CPU per call* is everything a call cost. Not in these figures: the child's JSON-RPC hop (the same for both paths). ${ROUNDS} rounds; in each, ${TOOL_CALLS} tool calls and ${RAW_CALLS} raw fetches per path, proxied and direct alternating call by call; medians over the rounds.`,
    "",
    "| path | p50 | p95 | CPU per call (mean) |",
    "|---|---|---|---|",
    row("web.fetch through the egress proxy", web.tool.proxied),
    row("web.fetch direct", web.tool.direct),
    row("raw fetch + body through the egress proxy (no Markdown)", web.raw.proxied),
    row("raw fetch + body direct (no Markdown)", web.raw.direct),
    "",
    `Added by the proxy, p50 (goal ≤ ${ADDED_GOAL_MS} ms): web.fetch **${signed(web.tool.addedP50)}** (per round: ${rounds(web.tool.addedRounds)}), ${verdict(web.tool.addedP50 <= ADDED_GOAL_MS)}; raw fetch **${signed(web.raw.addedP50)}** (per round: ${rounds(web.raw.addedRounds)}), the proxy's own cost without the HTML→Markdown work, which is the rest of a web.fetch (${formatMs(web.tool.direct.p50 - web.raw.direct.p50)} at p50 direct). ${loadNote(web.otherCores, quietBefore)}`,
  ];
}

function mcpSection(result: McpFigures, quietBefore: number): string[] {
  const heading = "### An MCP tool call through the toolhost child vs the SDK client directly";
  if (result.unavailable !== undefined || result.rows.length < 2)
    return [heading, "", `Not measured: ${result.unavailable ?? "no child ran"}.`];
  const [direct, ...others] = result.rows as [McpRow, ...McpRow[]];
  const rates = (values: number[]) => values.map((value) => value.toFixed(0)).join(", ");
  const ratio = (row: McpRow, key: "c1" | "c8") =>
    median(row[key].map((rate, index) => rate / (direct[key][index] ?? Number.NaN)));
  const cpu = (rounds: CallCpu[]) => {
    const part = (key: keyof CallCpu) => median(rounds.map((round) => round[key])).toFixed(0);
    return `${part("caller")} / ${part("child")} / ${part("server")}`;
  };
  const lines = [
    heading,
    "",
    `\`echo\` of test/fakes/mcp-stdio-server.ts (\`node --import tsx\`, the official SDK's server). *Direct*: the SDK's \`Client\` on a \`StdioClientTransport\` in this process, the server unjailed as ${process.getuid?.() === 0 ? "root" : "this user"}. *Child*: the real toolhost child from dist/, planned and started as the bot does (agents.json \`mcpServers\`, \`openAgentReach\`, \`prepareToolhostLaunches\`, the bot's \`createToolhostPool\`, whose \`initialize\` sends \`mcp.configure\`), called as \`mcp.fake.echo\` through the supervised client with a chat folder and an audit row per call committed in SQLite before the answer; the child starts the server in the agent's sandbox as the agent's uid (TOOLHOST_SANDBOX as in the row) and calls it with the same SDK client. ${MCP_WARMUP} warm-up calls each (the child starts its server on the first), then ${ROUNDS} rounds of ${MCP_CALLS[1]} calls at concurrency 1 and ${MCP_CALLS[8]} at concurrency 8, each subject's calls in ${MCP_SLICES} slices taken in turns (the order rotating); calls/s is the median of the rounds, the ratio the median of the rounds' ratios. CPU per call (µs, from /proc, medians of the rounds): this process (the SDK client, or the bot's pool client with the audit trail) / the toolhost child (bwrap and its init included) / the MCP server.`,
    "",
    "| path | calls/s c=1 | calls/s c=8 | rounds c=1 | rounds c=8 | vs direct c=1 | vs direct c=8 | CPU µs per call c=1 | CPU µs per call c=8 |",
    "|---|---|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (row) =>
        `| ${row.name} | ${median(row.c1).toFixed(0)} | ${median(row.c8).toFixed(0)} | ${rates(row.c1)} | ${rates(row.c8)} | ${ratio(row, "c1").toFixed(2)}x | ${ratio(row, "c8").toFixed(2)}x | ${cpu(row.cpu1)} | ${cpu(row.cpu8)} |`,
    ),
    "",
  ];
  // Time per call at c=1 is 1/rate; what the child adds is the difference, the hop alone is the ping's.
  const perCallUs = (rate: number) => 1e6 / rate;
  const directUs = perCallUs(median(direct.c1));
  const ping = others.find((row) => row.name.startsWith("ping"));
  for (const child of others.filter((row) => row !== ping)) {
    const met = ratio(child, "c1") >= MCP_RATIO_GOAL && ratio(child, "c8") >= MCP_RATIO_GOAL;
    const addedUs = perCallUs(median(child.c1)) - directUs;
    lines.push(
      `- ${child.name}: c=1 ${ratio(child, "c1").toFixed(2)}x, c=8 ${ratio(child, "c8").toFixed(2)}x (goal ≥ ${MCP_RATIO_GOAL}x): ${verdict(met)}. At c=1 a call takes ${addedUs.toFixed(0)} µs more than direct (${perCallUs(median(child.c1)).toFixed(0)} against ${directUs.toFixed(0)} µs)${ping ? `, of which the hop to the child alone (a ping) is ${perCallUs(median(ping.c1)).toFixed(0)} µs` : ""}; 0.8x would need a tool whose own round trip takes at least 4 × ${addedUs.toFixed(0)} µs = ${((4 * addedUs) / 1000).toFixed(1)} ms, where this echo takes ${directUs.toFixed(0)} µs.`,
    );
  }
  lines.push("", loadNote(result.otherCores, quietBefore));
  return lines;
}

export async function runReachBench(): Promise<string> {
  progress("waiting for a quiet second (at most 5 s)");
  const quietWeb = await waitForQuiet();
  const web = await benchWebFetch();
  // As root the child is jailed with bwrap, as the bot runs it; none mode too, for comparison.
  const sandboxes: Array<"bwrap" | "none"> = process.getuid?.() === 0 ? ["bwrap", "none"] : ["none"];
  progress("waiting for a quiet second (at most 5 s)");
  const quietMcp = await waitForQuiet();
  const mcp = await benchMcp(sandboxes);
  return [...webSection(web, quietWeb), "", ...mcpSection(mcp, quietMcp)].join("\n");
}
