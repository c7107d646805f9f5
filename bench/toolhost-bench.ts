/**
 * ToolHost benchmark: ping round-trip and 4 KiB file.read throughput against a raw stdio
 * echo child (the floor) and an MCP server on the official SDK (the reference); cold start
 * with and without bwrap; parent and child memory. Runs the built child (dist/).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { pino } from "pino";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { runCli } from "../src/cli/run-cli.js";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { prepareToolhostLaunches, spawnToolhostChild, type ToolhostLaunches } from "../src/runtime/toolhost-launch.js";
import { ToolhostPool } from "../src/toolhost/client/toolhost-pool.js";
import { FILE_CALLS, measureFileTools, SHELL_CALLS, seedFileToolTree, type FileToolFigures } from "./file-tools-measure.js";
import { formatMs, percentile, rssMb, throughput, timeEach } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, "dist/cli/main.js");
const PINGS = 2_000;
const READS = 4_000;
const COLD_STARTS = 8;
const CRASH_ROUNDS = 20;
const CALLS_IN_FLIGHT = 5;

type Row = { name: string; pingP50: number; pingP99: number; read1: number; read8: number; coldMs: number; childRss: number };

export async function seedWorkspace(sandbox: string): Promise<{ workspaceDir: string; file: string }> {
  const base = mkdtempSync(join(tmpdir(), "laoding-bench-"));
  chmodSync(base, 0o755);
  const workspaceDir = join(base, "rt");
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  await runCli({ args: ["init", "--workspace", workspaceDir], env: { LOG_LEVEL: "silent" }, cwd: ROOT, repoRoot: ROOT, stdout: sink, stderr: sink, stdin: process.stdin });
  writeFileSync(join(workspaceDir, "configs/env"), `REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=${sandbox}\nLOG_LEVEL=warn\n`);
  const file = join(workspaceDir, "workspace/main/bench.txt");
  mkdirSync(join(workspaceDir, "workspace/main"), { recursive: true });
  writeFileSync(file, "x".repeat(4096));
  seedFileToolTree(join(workspaceDir, "workspace/main/fbench"));
  return { workspaceDir, file };
}

/** The launches the bot would plan for this workspace (as root: owners, modes, probes). */
function launchesFor(workspaceDir: string): ToolhostLaunches {
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  return prepareToolhostLaunches({ config: loaded.config, layout, agents: readAgentsFile(layout.agentsFile), cliEntry: ENTRY });
}

export function toolhostPool(workspaceDir: string) {
  const launches = launchesFor(workspaceDir);
  return new ToolhostPool({
    settings: { callTimeoutMs: 30_000, heartbeatMs: 60_000, restartLimit: 3, restartWindowMs: 60_000, concurrency: 8, queueMax: 64, maxFrameBytes: 16 << 20, startTimeoutMs: 20_000, stopGraceMs: 2_000 },
    spawn: (agentId) => spawnToolhostChild(launches.agents.get(agentId) as NonNullable<ReturnType<ToolhostLaunches["agents"]["get"]>>),
    logger: pino({ level: "silent" }),
  });
}

async function benchToolhost(sandbox: "none" | "bwrap"): Promise<Row> {
  const { workspaceDir, file } = await seedWorkspace(sandbox);
  const colds: number[] = [];
  for (let index = 0; index < COLD_STARTS; index += 1) {
    const pool = toolhostPool(workspaceDir);
    const started = performance.now();
    await pool.client("main").ping();
    colds.push(performance.now() - started);
    await pool.stopAll();
  }
  const pool = toolhostPool(workspaceDir);
  const client = pool.client("main");
  await client.ping();
  const pings = await timeEach(PINGS, () => client.ping());
  const read = async () => {
    const result = await client.callTool({ name: "file.read", args: { path: file } });
    if (!result.ok) throw new Error(JSON.stringify(result));
  };
  const read1 = await throughput(READS, 1, read);
  const read8 = await throughput(READS, 8, read);
  const childRss = rssMb(client.supervisor.pid ?? 0);
  await pool.stopAll();
  rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  return { name: `laoding toolhost (${sandbox})`, pingP50: percentile(pings, 50), pingP99: percentile(pings, 99), read1, read8, coldMs: percentile(colds, 50), childRss };
}

async function benchEcho(file: string): Promise<Row> {
  const start = () => {
    const child = spawn(process.execPath, [join(ROOT, "bench/fixtures/echo-child.mjs"), file], { stdio: ["pipe", "pipe", "inherit"] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    connection.listen();
    return { child, connection };
  };
  const colds: number[] = [];
  for (let index = 0; index < COLD_STARTS; index += 1) {
    const started = performance.now();
    const { child, connection } = start();
    await connection.sendRequest("ping", {});
    colds.push(performance.now() - started);
    connection.dispose();
    await stop(child);
  }
  const { child, connection } = start();
  const pings = await timeEach(PINGS, () => connection.sendRequest("ping", {}));
  const read = () => connection.sendRequest("tool.call", { name: "file.read", args: { path: file } });
  const read1 = await throughput(READS, 1, read);
  const read8 = await throughput(READS, 8, read);
  const childRss = rssMb(child.pid ?? 0);
  connection.dispose();
  await stop(child);
  return { name: "raw stdio echo (floor)", pingP50: percentile(pings, 50), pingP99: percentile(pings, 99), read1, read8, coldMs: percentile(colds, 50), childRss };
}

async function benchMcp(file: string): Promise<Row> {
  const start = async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "bench/fixtures/mcp-read-server.mjs")], stderr: "inherit" });
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(transport);
    return { client, transport };
  };
  const colds: number[] = [];
  for (let index = 0; index < COLD_STARTS; index += 1) {
    const started = performance.now();
    const { client } = await start();
    await client.ping();
    colds.push(performance.now() - started);
    await client.close();
  }
  const { client, transport } = await start();
  const pings = await timeEach(PINGS, () => client.ping());
  const read = () => client.callTool({ name: "read_file", arguments: { path: file } });
  const read1 = await throughput(READS, 1, read);
  const read8 = await throughput(READS, 8, read);
  const childRss = rssMb(transport.pid ?? 0);
  await client.close();
  return { name: "MCP SDK server (stdio)", pingP50: percentile(pings, 50), pingP99: percentile(pings, 99), read1, read8, coldMs: percentile(colds, 50), childRss };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * TOOLHOST.md outcome 4 as a number: the real child (none mode) is SIGKILLed with 5 shell
 * calls in flight; the time from the kill to the last of them rejecting.
 */
async function benchCrashRejection(): Promise<{ p50: number; max: number }> {
  const { workspaceDir } = await seedWorkspace("none");
  const pool = toolhostPool(workspaceDir);
  const client = pool.client("main");
  const times: number[] = [];
  for (let round = 0; round < CRASH_ROUNDS; round += 1) {
    // After a crash the supervisor backs off before restarting; calls fail fast until then.
    while (!(await client.ping().then(() => true, () => false))) await new Promise((resolve) => setTimeout(resolve, 10));
    const pid = client.supervisor.pid ?? 0;
    const calls = Array.from({ length: CALLS_IN_FLIGHT }, () => client.callTool({ name: "shell.exec", args: { command: "tail -f /dev/null", timeout_ms: 30_000 } }));
    while (client.load.running < CALLS_IN_FLIGHT) await new Promise((resolve) => setTimeout(resolve, 5));
    // Let the calls reach the child and start their commands.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const killed = performance.now();
    process.kill(pid, "SIGKILL");
    const results = await Promise.all(calls);
    times.push(performance.now() - killed);
    if (results.some((result) => result.ok || result.error.code !== "TOOLHOST_CRASHED")) throw new Error(`expected TOOLHOST_CRASHED, got ${JSON.stringify(results)}`);
  }
  await pool.stopAll();
  rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  return { p50: percentile(times, 50), max: Math.max(...times) };
}

const BOUNDARY_ROUNDS = 3;

/** Median of each figure over a few rounds: one round on a shared 2-core machine is too noisy to compare. */
function medianFigures(rounds: FileToolFigures[]): FileToolFigures {
  const median = (key: keyof FileToolFigures) => percentile(rounds.map((round) => round[key]), 50);
  return { read8: median("read8"), write8: median("write8"), list8: median("list8"), grep1: median("grep1"), shellP50: median("shellP50"), shellP99: median("shellP99") };
}

async function benchFileTools(sandbox: "none" | "bwrap"): Promise<FileToolFigures> {
  const rounds: FileToolFigures[] = [];
  for (let round = 0; round < BOUNDARY_ROUNDS; round += 1) {
    const { workspaceDir } = await seedWorkspace(sandbox);
    const pool = toolhostPool(workspaceDir);
    const client = pool.client("main");
    await client.ping();
    rounds.push(await measureFileTools(client, join(workspaceDir, "workspace/main/fbench")));
    await pool.stopAll();
    rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  }
  return medianFigures(rounds);
}

/**
 * What the sandbox boundary costs per call: file tools and shell commands through the real
 * child, in each mode. The "before" rows in bench/README.md were measured with the same
 * measurement file against the last commit before the boundary (0fb1349).
 */
export async function runBoundaryBench(): Promise<string> {
  const rows: Array<[string, FileToolFigures]> = [];
  for (const sandbox of ["none", "bwrap"] as const) rows.push([`laoding toolhost (${sandbox})`, await benchFileTools(sandbox)]);
  return [
    `Median of ${BOUNDARY_ROUNDS} rounds, each with a fresh workspace and child (as ${process.getuid?.() === 0 ? "root: the child runs as the agent's uid, jailed" : "a non-root user"}). read/write: ${FILE_CALLS} calls of 4 KiB at concurrency 8; list: a folder of 50 files, concurrency 8; grep: ${FILE_CALLS / 10} sequential searches over those 50 files; shell: ${SHELL_CALLS} sequential \`true\` commands.`,
    "",
    "| child | file.read/s c=8 | file.write/s c=8 | file.list/s c=8 | file.grep/s c=1 | shell.exec p50 | shell.exec p99 |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(([name, f]) => `| ${name} | ${f.read8.toFixed(0)} | ${f.write8.toFixed(0)} | ${f.list8.toFixed(0)} | ${f.grep1.toFixed(0)} | ${formatMs(f.shellP50)} | ${formatMs(f.shellP99)} |`),
  ].join("\n");
}

export async function runToolhostBench(): Promise<string> {
  const { file } = await seedWorkspace("none");
  const rows: Row[] = [];
  rows.push(await benchEcho(file));
  rows.push(await benchMcp(file));
  rows.push(await benchToolhost("none"));
  rows.push(await benchToolhost("bwrap"));
  const crash = await benchCrashRejection();
  const floor = rows[0] as Row;
  const mcp = rows[1] as Row;
  const lines = [
    `Ping: ${PINGS} sequential round-trips. Read: ${READS} calls of a 4 KiB file per concurrency level. Cold start: median of ${COLD_STARTS} spawns to first ping answered. RSS after the read runs. Parent RSS at the end: ${rssMb(process.pid).toFixed(0)} MiB.`,
    "",
    "| child | ping p50 | ping p99 | read/s c=1 | read/s c=8 | cold start | child RSS | read c=8 vs floor | read c=8 vs MCP |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${formatMs(row.pingP50)} | ${formatMs(row.pingP99)} | ${row.read1.toFixed(0)} | ${row.read8.toFixed(0)} | ${formatMs(row.coldMs)} | ${row.childRss.toFixed(0)} MiB | ${(row.read8 / floor.read8).toFixed(2)}x | ${(row.read8 / mcp.read8).toFixed(2)}x |`,
    ),
    "",
    `Crash to rejection (target: under 100 ms, TOOLHOST.md outcome 4): the real child SIGKILLed with ${CALLS_IN_FLIGHT} shell calls in flight, ${CRASH_ROUNDS} rounds; time from the kill until the last call rejected with TOOLHOST_CRASHED: p50 ${formatMs(crash.p50)}, max ${formatMs(crash.max)}.`,
  ];
  return lines.join("\n");
}
