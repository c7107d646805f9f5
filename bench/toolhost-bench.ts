/**
 * ToolHost benchmark: ping round-trip and 4 KiB file.read throughput against a raw stdio
 * echo child (the floor) and an MCP server on the official SDK (the reference); cold start
 * with and without bwrap; parent and child memory. Runs the built child (dist/).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
import { systemClock } from "../src/store/clock.js";
import { openStore, type Store } from "../src/store/store.js";
import { ToolhostPool } from "../src/toolhost/client/toolhost-pool.js";
import { measureBotMemory } from "./bot-memory.js";
import {
  FILE_CALLS,
  measureFileTools,
  SHELL_CALLS,
  seedFileToolTree,
  type FileToolFigures,
} from "./file-tools-measure.js";
import { formatMs, percentile, rssMb, throughput, timeEach, treeRssMb } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, "dist/cli/main.js");
const PINGS = 2_000;
/** Reads per concurrency level: the child's RSS is taken after 2 x READS = 10,000 reads. */
const READS = 5_000;
const COLD_STARTS = 8;
/** How long the child is left alone after the reads before its memory is read again (it collects once quiet for a 0.5-1 s check interval). */
const SETTLE_MS = 2_000;
const CRASH_ROUNDS = 20;
const CALLS_IN_FLIGHT = 5;
const BOT_MESSAGES = 200;
/** No step of this bench may take longer: a stuck child fails the run instead of hanging it. */
const STEP_DEADLINE_MS = 120_000;

type Row = {
  name: string;
  pingP50: number;
  pingP99: number;
  read1: number;
  read8: number;
  coldMs: number;
  idleRss: number;
  childRss: number;
  settledRss: number;
};

/** The ping/read/cold-start figures of one kind of child, from a way to start it. */
type Subject = {
  name: string;
  start(): Promise<{ ping(): Promise<unknown>; read(): Promise<unknown>; pid(): number; close(): Promise<void> }>;
};

export async function seedWorkspace(sandbox: string): Promise<{ workspaceDir: string; file: string }> {
  const base = mkdtempSync(join(tmpdir(), "laoding-bench-"));
  chmodSync(base, 0o755);
  const workspaceDir = join(base, "rt");
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  await runCli({
    args: ["init", "--workspace", workspaceDir],
    env: { LOG_LEVEL: "silent" },
    cwd: ROOT,
    repoRoot: ROOT,
    stdout: sink,
    stderr: sink,
    stdin: process.stdin,
  });
  writeFileSync(join(workspaceDir, "configs/env"), `REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=${sandbox}\nLOG_LEVEL=warn\n`);
  const file = join(workspaceDir, "workspace/main/bench.txt");
  mkdirSync(join(workspaceDir, "workspace/main"), { recursive: true });
  writeFileSync(file, "x".repeat(4096));
  seedFileToolTree(join(workspaceDir, "workspace/main/fbench"));
  return { workspaceDir, file };
}

/** The launches the bot would plan for this workspace (as root: owners, modes, probes). */
function launchesFor(workspaceDir: string, entry = ENTRY): ToolhostLaunches {
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  return prepareToolhostLaunches({
    config: loaded.config,
    layout,
    agents: readAgentsFile(layout.agentsFile),
    cliEntry: entry,
  });
}

/** The pool as the bot builds it, audit trail included when a store is given. */
export function toolhostPool(workspaceDir: string, store?: Store, entry = ENTRY, nodeFlags: string[] = []) {
  const launches = launchesFor(workspaceDir, entry);
  // Node flags of a variant (an A/B of V8's settings) go last, before the child's entry: the last of a flag wins.
  for (const launch of launches.agents.values()) {
    const entryAt = launch.launch.args.findIndex((arg) => arg.endsWith("child-entry.js"));
    if (entryAt < 0) throw new Error("no child entry in the launch to put Node flags before");
    launch.launch.args.splice(entryAt, 0, ...nodeFlags);
  }
  return new ToolhostPool({
    settings: {
      callTimeoutMs: 30_000,
      heartbeatMs: 60_000,
      restartLimit: 3,
      restartWindowMs: 60_000,
      concurrency: 8,
      queueMax: 64,
      maxFrameBytes: 16 << 20,
      startTimeoutMs: 20_000,
      stopGraceMs: 2_000,
    },
    spawn: (agentId) =>
      spawnToolhostChild(launches.agents.get(agentId) as NonNullable<ReturnType<ToolhostLaunches["agents"]["get"]>>),
    logger: pino({ level: "silent" }),
    ...(store ? { audit: store.toolCalls } : {}),
  });
}

function withDeadline<T>(label: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`bench step "${label}" took over ${STEP_DEADLINE_MS} ms; a child is stuck`)),
      STEP_DEADLINE_MS,
    );
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

function progress(message: string): void {
  process.stderr.write(`  toolhost bench: ${message}\n`);
}

async function measure(subject: Subject): Promise<Row> {
  const step = <T>(label: string, work: () => Promise<T>) => {
    progress(`${subject.name}: ${label}`);
    return withDeadline(`${subject.name}: ${label}`, work());
  };
  const colds = await step(`${COLD_STARTS} cold starts`, async () => {
    const times: number[] = [];
    for (let index = 0; index < COLD_STARTS; index += 1) {
      const started = performance.now();
      const child = await subject.start();
      await child.ping();
      times.push(performance.now() - started);
      await child.close();
    }
    return times;
  });
  const child = await subject.start();
  try {
    await child.ping();
    // Idle: started and answered once, then left alone for a moment (start-up garbage collected or not).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idleRss = treeRssMb(child.pid());
    const pings = await step(`${PINGS} pings`, () => timeEach(PINGS, () => child.ping()));
    const read1 = await step(`${READS} reads at c=1`, () => throughput(READS, 1, () => child.read()));
    const read8 = await step(`${READS} reads at c=8`, () => throughput(READS, 8, () => child.read()));
    const childRss = treeRssMb(child.pid());
    // Then left alone as an agent between bursts is: the child collects the burst's garbage once it has gone quiet.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settledRss = treeRssMb(child.pid());
    return {
      name: subject.name,
      pingP50: percentile(pings, 50),
      pingP99: percentile(pings, 99),
      read1,
      read8,
      coldMs: percentile(colds, 50),
      idleRss,
      childRss,
      settledRss,
    };
  } finally {
    await child.close();
  }
}

function rpcChild(name: string, script: string, file: string): Subject {
  return {
    name,
    async start() {
      const child = spawn(process.execPath, [join(ROOT, "bench/fixtures", script), file], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      const connection = createMessageConnection(
        new StreamMessageReader(child.stdout),
        new StreamMessageWriter(child.stdin),
      );
      connection.listen();
      return {
        ping: () => connection.sendRequest("ping", {}),
        read: () => connection.sendRequest("tool.call", { name: "file.read", args: { path: file } }),
        pid: () => child.pid ?? 0,
        close: async () => {
          connection.dispose();
          await stop(child);
        },
      };
    },
  };
}

export function mcpChild(name: string, transport: () => StdioClientTransport, tool: string, file: string): Subject {
  return {
    name,
    async start() {
      const stdio = transport();
      const client = new Client({ name: "bench", version: "1.0.0" });
      await client.connect(stdio);
      return {
        ping: () => client.ping(),
        read: async () => {
          const result = await client.callTool({ name: tool, arguments: { path: file } });
          if (result.isError) throw new Error(JSON.stringify(result.content));
        },
        pid: () => stdio.pid ?? 0,
        close: () => client.close(),
      };
    },
  };
}

/** `entry`: the CLI whose child serves (another build of dist/), `nodeFlags`: more flags for its Node, for an A/B of the child alone. */
export async function laodingChild(
  sandbox: "none" | "bwrap",
  entry = ENTRY,
  nodeFlags: string[] = [],
): Promise<Subject & { cleanup(): void }> {
  const { workspaceDir, file } = await seedWorkspace(sandbox);
  const databaseFile = join(workspaceDir, "..", "audit.db");
  // Every call of the bot names its chat's folder as the working folder.
  const chatCwd = join(dirname(file), "bench-c1");
  return {
    name: `laoding toolhost (${sandbox})`,
    async start() {
      const store = await openStore(databaseFile, systemClock);
      const pool = toolhostPool(workspaceDir, store, entry, nodeFlags);
      const client = pool.client("main");
      return {
        ping: () => client.ping(),
        read: async () => {
          const result = await client.callTool({
            name: "file.read",
            args: { path: file },
            traceId: "bench",
            cwd: chatCwd,
          });
          if (!result.ok) throw new Error(JSON.stringify(result));
        },
        pid: () => client.supervisor.pid ?? 0,
        close: async () => {
          await pool.stopAll();
          await store.close();
        },
      };
    },
    cleanup: () => rmSync(join(workspaceDir, ".."), { recursive: true, force: true }),
  };
}

/** `laoding toolhost --agent main --mcp`: the same child behind the official SDK's server, audit included. */
async function laodingMcp(): Promise<Subject & { cleanup(): void }> {
  const { workspaceDir, file } = await seedWorkspace("bwrap");
  return {
    ...mcpChild(
      "laoding MCP mode (bwrap)",
      () =>
        new StdioClientTransport({
          command: process.execPath,
          args: [ENTRY, "toolhost", "--agent", "main", "--mcp", "--workspace", workspaceDir],
          stderr: "inherit",
          env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn" },
        }),
      "file.read",
      file,
    ),
    cleanup: () => rmSync(join(workspaceDir, ".."), { recursive: true, force: true }),
  };
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
    while (
      !(await client.ping().then(
        () => true,
        () => false,
      ))
    )
      await new Promise((resolve) => setTimeout(resolve, 10));
    const pid = client.supervisor.pid ?? 0;
    // A session per round: the client refuses a call that already crashed the child twice in its session.
    const calls = Array.from({ length: CALLS_IN_FLIGHT }, () =>
      client.callTool({
        name: "shell.exec",
        args: { command: "tail -f /dev/null", timeout_ms: 30_000 },
        sessionId: round + 1,
      }),
    );
    for (let waited = 0; client.load.running < CALLS_IN_FLIGHT; waited += 5) {
      if (waited > 10_000)
        throw new Error(
          `only ${client.load.running} of ${CALLS_IN_FLIGHT} shell calls started: ${JSON.stringify(await Promise.race(calls))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Let the calls reach the child and start their commands.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const killed = performance.now();
    process.kill(pid, "SIGKILL");
    const results = await Promise.all(calls);
    times.push(performance.now() - killed);
    if (results.some((result) => result.ok || result.error.code !== "TOOLHOST_CRASHED"))
      throw new Error(`expected TOOLHOST_CRASHED, got ${JSON.stringify(results)}`);
  }
  await pool.stopAll();
  rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  return { p50: percentile(times, 50), max: Math.max(...times) };
}

const BOUNDARY_ROUNDS = 3;

/** Median of each figure over a few rounds: one round on a shared 2-core machine is too noisy to compare. */
function medianFigures(rounds: FileToolFigures[]): FileToolFigures {
  const median = (key: keyof FileToolFigures) =>
    percentile(
      rounds.map((round) => round[key]),
      50,
    );
  return {
    read8: median("read8"),
    write8: median("write8"),
    list8: median("list8"),
    grep1: median("grep1"),
    shellP50: median("shellP50"),
    shellP99: median("shellP99"),
  };
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
  for (const sandbox of ["none", "bwrap"] as const)
    rows.push([`laoding toolhost (${sandbox})`, await benchFileTools(sandbox)]);
  return [
    `Median of ${BOUNDARY_ROUNDS} rounds, each with a fresh workspace and child (as ${process.getuid?.() === 0 ? "root: the child runs as the agent's uid, jailed" : "a non-root user"}). read/write: ${FILE_CALLS} calls of 4 KiB at concurrency 8; list: a folder of 50 files, concurrency 8; grep: ${FILE_CALLS / 10} sequential searches over those 50 files; shell: ${SHELL_CALLS} sequential \`true\` commands.`,
    "",
    "| child | file.read/s c=8 | file.write/s c=8 | file.list/s c=8 | file.grep/s c=1 | shell.exec p50 | shell.exec p99 |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      ([name, f]) =>
        `| ${name} | ${f.read8.toFixed(0)} | ${f.write8.toFixed(0)} | ${f.list8.toFixed(0)} | ${f.grep1.toFixed(0)} | ${formatMs(f.shellP50)} | ${formatMs(f.shellP99)} |`,
    ),
  ].join("\n");
}

export async function runToolhostBench(): Promise<string> {
  const { workspaceDir, file } = await seedWorkspace("none");
  const rows: Row[] = [];
  rows.push(await measure(rpcChild("raw stdio echo (floor)", "echo-child.mjs", file)));
  rows.push(await measure(rpcChild("bare vscode-jsonrpc", "jsonrpc-child.mjs", file)));
  rows.push(
    await measure(
      mcpChild(
        "MCP SDK server (stdio)",
        () =>
          new StdioClientTransport({
            command: process.execPath,
            args: [join(ROOT, "bench/fixtures/mcp-read-server.mjs")],
            stderr: "inherit",
          }),
        "read_file",
        file,
      ),
    ),
  );
  for (const make of [() => laodingChild("none"), () => laodingChild("bwrap"), laodingMcp]) {
    const subject = await make();
    try {
      rows.push(await measure(subject));
    } finally {
      subject.cleanup();
    }
  }
  progress("the bot's memory with one agent");
  const bot = await withDeadline("bot memory", measureBotMemory(ENTRY, BOT_MESSAGES, seedWorkspace));
  progress("crash to rejection");
  const crash = await withDeadline("crash to rejection", benchCrashRejection());
  rmSync(join(workspaceDir, ".."), { recursive: true, force: true });
  const bare = rows[1] as Row;
  const mcp = rows[2] as Row;
  const lines = [
    `Ping: ${PINGS} sequential round-trips. Read: ${READS} calls of a 4 KiB file at each concurrency. Cold start: median of ${COLD_STARTS} spawns to first ping answered. Child RSS idle (after its first ping), right after the ${2 * READS} reads, and ${SETTLE_MS / 1000} s later. laoding rows go through the supervised client as the bot uses it (a chat's working folder, deadline, semaphore, checks both ways, an audit row per call in SQLite written ahead: its intent committed before the caller has the result, its outcome in a later commit), with the child as the agent's uid. Parent RSS at the end of the run: ${rssMb(process.pid).toFixed(0)} MiB (this bench process, all rows).`,
    "",
    `| child | ping p50 | ping p99 | read/s c=1 | read/s c=8 | cold start | child RSS idle | right after reads | ${SETTLE_MS / 1000} s later | ping p50 vs bare | read c=1 vs MCP | read c=8 vs MCP |`,
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${formatMs(row.pingP50)} | ${formatMs(row.pingP99)} | ${row.read1.toFixed(0)} | ${row.read8.toFixed(0)} | ${formatMs(row.coldMs)} | ${row.idleRss.toFixed(0)} MiB | ${row.childRss.toFixed(0)} MiB | ${row.settledRss.toFixed(0)} MiB | ${(row.pingP50 / bare.pingP50).toFixed(2)}x | ${(row.read1 / mcp.read1).toFixed(2)}x | ${(row.read8 / mcp.read8).toFixed(2)}x |`,
    ),
    "",
    `The bot with one agent (\`laoding start\` with \`npm start\`'s Node flags, console channel, bwrap, a loopback model; every message makes one file.read): the bot process ${bot.startRss.toFixed(0)} MiB after its first answer and ${bot.botRss.toFixed(0)} MiB after ${bot.messages} messages (target: at most 120); its toolhost child then ${bot.childRss.toFixed(0)} MiB (bwrap, its init and Node; target: at most 64).`,
    "",
    `Crash to rejection (target: under 100 ms, TOOLHOST.md outcome 4): the real child SIGKILLed with ${CALLS_IN_FLIGHT} shell calls in flight, ${CRASH_ROUNDS} rounds; time from the kill until the last call rejected with TOOLHOST_CRASHED: p50 ${formatMs(crash.p50)}, max ${formatMs(crash.max)}.`,
  ];
  return lines.join("\n");
}
