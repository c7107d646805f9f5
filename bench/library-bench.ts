/**
 * Experience library at 10,000 documents: the child's keeper (in memory, term index,
 * incremental, INDEX.md written in slices) against the stateless regeneration and scan
 * it replaced, in-process and through the real toolhost child in both sandbox modes.
 *
 * "Longest block" is the event loop's longest delay while the work ran (in-process:
 * `monitorEventLoopDelay`; through the child: the slowest file.read answered while a
 * rebuild ran), i.e. how long another call of the agent could have had to wait.
 *
 * The child is the built one: `dist/` (or LAODING_BENCH_DIST, e.g. a build made with
 * `tsc -p tsconfig.build.json --outDir dist-check/library-bench` while dist/ is in use).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { runCli } from "../src/cli/run-cli.js";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { ensureFresh, rebuildIndex } from "../src/knowledge/library/library-index.js";
import { LibraryKeeper } from "../src/knowledge/library/library-keeper.js";
import { parseIndexLines } from "../src/knowledge/library/library-search.js";
import { TermIndex } from "../src/knowledge/library/library-term-index.js";
import { prepareToolhostLaunches, spawnToolhostChild, type AgentLaunch } from "../src/runtime/toolhost-launch.js";
import { ToolhostPool } from "../src/toolhost/client/toolhost-pool.js";
import { referenceSearch } from "../test/knowledge/library/reference-search.js";
import { formatMs, percentile, timeEach, treeRssMb } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, process.env.LAODING_BENCH_DIST ?? "dist", "cli/main.js");
const DOCS = 10_000;
const SEARCHES = 400;
const CHILD_SEARCHES = 200;
const TOPICS = [
  "mysql 死锁",
  "飞书 卡片",
  "kubernetes 滚动发布",
  "redis 缓存击穿",
  "nginx 502",
  "告警 降噪",
  "docker 镜像瘦身",
  "支付 回调 幂等",
  "日志 采样",
  "灰度 回滚",
];
const QUERIES = [
  "死锁",
  "deadlock",
  "飞书卡片",
  "rollback",
  "缓存",
  "nginx 502",
  "幂等",
  "kubernetes",
  "降噪",
  "不存在的主题",
];
/** The previous version's figures (bench/README.md of 2026-12-01, same machine type). */
const BEFORE = {
  regenerate: "1599.26 ms (blocks throughout)",
  freshness: "190.13 ms",
  inProcess: "77.35 ms / 254.34 ms",
  child: "311.44 ms / 619.08 ms",
};

function docText(index: number, revision = 0): string {
  const topic = TOPICS[index % TOPICS.length] as string;
  const date = docDate(index);
  const [first = "", second = ""] = topic.split(" ");
  return `---\ntitle: ${topic} 实录 ${index}${revision > 0 ? ` 修订 ${revision}` : ""}\nkeywords: ${first}, ${second}, case-${index}, deadlock-${index % 3 === 0 ? "yes" : "no"}\nsummary: ${topic} 的排查步骤与结论(第 ${index} 篇),rollback plan included\napplicable: backend\nlast_verified: ${date}\n---\n${"正文 body text. ".repeat(80)}\n`;
}

function docDate(index: number): string {
  return `20${20 + (index % 7)}-${String((index % 12) + 1).padStart(2, "0")}-${String((index % 28) + 1).padStart(2, "0")}`;
}

function docName(index: number): string {
  const [first = ""] = (TOPICS[index % TOPICS.length] as string).split(" ");
  return `${docDate(index)}-${first}-${index}.md`;
}

function seedDocs(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  for (let index = 0; index < count; index += 1) writeFileSync(join(dir, docName(index)), docText(index));
}

const median = (values: number[]) => percentile(values, 50);
const ms = (value: number) => formatMs(value);

/** Runs `work` and reports its time and the event loop's longest delay meanwhile. */
async function blocking<T>(work: () => Promise<T> | T): Promise<{ ms: number; blockMs: number; result: T }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // A timer must be able to fire for a delay to be seen: let the first one arm.
  await new Promise((resolve) => setTimeout(resolve, 2));
  const started = performance.now();
  const result = await work();
  const elapsed = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 2));
  histogram.disable();
  return { ms: elapsed, blockMs: histogram.max / 1e6, result };
}

async function rounds<T>(count: number, work: () => Promise<T> | T): Promise<{ ms: number; blockMs: number; last: T }> {
  const times: number[] = [];
  let blockMs = 0;
  let last: T | undefined;
  for (let round = 0; round < count; round += 1) {
    const measured = await blocking(work);
    times.push(measured.ms);
    blockMs = Math.max(blockMs, measured.blockMs);
    last = measured.result;
  }
  return { ms: median(times), blockMs, last: last as T };
}

type Row = [measure: string, before: string, now: string];

async function inProcess(base: string): Promise<Row[]> {
  const dir = join(base, "lib");
  seedDocs(dir, DOCS);
  const zh = { locale: "zh" } as const;
  // The stateless code (what every library call of the child ran until now).
  const statelessRebuild = await rounds(3, () => rebuildIndex(dir, zh));
  const statelessFresh = await rounds(11, () => ensureFresh(dir, zh));
  const indexText = readFileSync(join(dir, "INDEX.md"), "utf8");
  let query = 0;
  const nextQuery = () => QUERIES[(query += 1) % QUERIES.length] as string;
  const scan = await timeEach(SEARCHES / 4, async () => referenceSearch(indexText, nextQuery(), 10));

  // The keeper: cold (no INDEX.md), warm start (INDEX.md up to date), rebuild, one edit.
  const cold = await rounds(3, async () => {
    rmSync(join(dir, "INDEX.md"), { force: true });
    const keeper = new LibraryKeeper({ dir, locale: "zh" });
    const result = await keeper.refresh();
    keeper.close();
    return { ...result, reads: keeper.stats.reads };
  });
  const warm = await rounds(3, async () => {
    const keeper = new LibraryKeeper({ dir, locale: "zh" });
    const result = await keeper.refresh();
    keeper.close();
    return { ...result, reads: keeper.stats.reads };
  });
  const keeper = new LibraryKeeper({ dir, locale: "zh" });
  await keeper.refresh();
  const rebuild = await rounds(3, () => keeper.refresh({ rebuild: true }));
  let edited = 0;
  const edit = await rounds(11, async () => {
    edited += 1;
    const path = join(dir, docName(edited * 7));
    writeFileSync(path, docText(edited * 7, edited));
    return keeper.refresh({ since: keeper.noteWritten(path) });
  });
  const fresh = await rounds(21, () => keeper.refresh());
  const searches = await timeEach(SEARCHES, () => keeper.search(nextQuery(), 10));
  const index = new TermIndex();
  for (const { line, file } of parseIndexLines(readFileSync(join(dir, "INDEX.md"), "utf8"))) index.add(file, line);
  const ranking = await timeEach(SEARCHES, async () => index.search(nextQuery(), 10));
  const check = ensureFresh(dir, zh);
  keeper.close();
  if (check.regenerated) throw new Error("the keeper's INDEX.md should satisfy the stateless check");

  return [
    [
      "INDEX.md from scratch: every document read (keeper: cold, no INDEX.md; median of 3)",
      BEFORE.regenerate,
      `${ms(cold.ms)}, longest block ${ms(cold.blockMs)} (${cold.last.reads} documents read)`,
    ],
    [
      "a new child's first refresh with INDEX.md up to date (median of 3)",
      "-",
      `${ms(warm.ms)}, longest block ${ms(warm.blockMs)} (${warm.last.reads} documents read)`,
    ],
    [
      "library.index rebuild: every document read again (median of 3)",
      BEFORE.regenerate,
      `${ms(rebuild.ms)}, longest block ${ms(rebuild.blockMs)}`,
    ],
    [
      "one document edited, until INDEX.md is rewritten (median of 11)",
      BEFORE.regenerate,
      `${ms(edit.ms)}, longest block ${ms(edit.blockMs)}`,
    ],
    ["freshness check, up-to-date library (median of 21)", BEFORE.freshness, ms(fresh.ms)],
    [
      `library.search in-process, freshness check included (p50 / p99 of ${SEARCHES})`,
      BEFORE.inProcess,
      `${ms(percentile(searches, 50))} / ${ms(percentile(searches, 99))}`,
    ],
    [
      `ranking only: term index (now) / scan of every line (before), this run (p50 / p99)`,
      `${ms(percentile(scan, 50))} / ${ms(percentile(scan, 99))}`,
      `${ms(percentile(ranking, 50))} / ${ms(percentile(ranking, 99))}`,
    ],
    [
      "stateless regeneration / freshness check (library-index.ts, still used outside the child's tools), this run",
      `${ms(statelessRebuild.ms)} / ${ms(statelessFresh.ms)}`,
      "(unchanged code)",
    ],
  ];
}

/** A workspace whose agent main has the documents, and a pool over the real (built) child. */
async function childWorkspace(base: string, sandbox: "none" | "bwrap") {
  const workspaceDir = join(base, `rt-${sandbox}`);
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
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  const library = layout.agentTrees("main").experienceDir;
  seedDocs(library, DOCS);
  const launches = prepareToolhostLaunches({
    config: loaded.config,
    layout,
    agents: readAgentsFile(layout.agentsFile),
    cliEntry: ENTRY,
  });
  const probe = join(layout.agentTrees("main").workTree, "probe.txt");
  mkdirSync(layout.agentTrees("main").workTree, { recursive: true });
  writeFileSync(probe, "x".repeat(4096));
  chmodSync(probe, 0o644);
  const pool = () =>
    new ToolhostPool({
      settings: {
        callTimeoutMs: 60_000,
        heartbeatMs: 60_000,
        restartLimit: 3,
        restartWindowMs: 60_000,
        concurrency: 4,
        queueMax: 64,
        maxFrameBytes: 16 << 20,
        startTimeoutMs: 20_000,
        stopGraceMs: 2_000,
      },
      spawn: (agentId) => spawnToolhostChild(launches.agents.get(agentId) as AgentLaunch),
      logger: pino({ level: "silent" }),
    });
  return { pool, probe };
}

async function throughChild(base: string, sandbox: "none" | "bwrap"): Promise<Row[]> {
  const { pool: makePool, probe } = await childWorkspace(base, sandbox);
  const call = async (client: ReturnType<ToolhostPool["client"]>, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, args });
    if (!result.ok) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
    return result.output;
  };
  let query = 0;
  const firstSearch = async () => {
    const pool = makePool();
    const client = pool.client("main");
    await call(client, "file.read", { path: probe });
    const started = performance.now();
    await call(client, "library.search", { query: QUERIES[(query += 1) % QUERIES.length] as string });
    const elapsed = performance.now() - started;
    return { pool, client, elapsed };
  };
  // A new child builds from the documents (no INDEX.md yet), then one that finds INDEX.md up to date.
  const cold = await firstSearch();
  await call(cold.client, "library.index", {});
  await cold.pool.stopAll();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const warm = await firstSearch();
  const { client, pool } = warm;
  const pid = client.supervisor.pid ?? 0;
  const search = () => call(client, "library.search", { query: QUERIES[(query += 1) % QUERIES.length] as string });
  await search();
  const searches = await timeEach(CHILD_SEARCHES, search);
  const rss = treeRssMb(pid);
  const reads = await timeEach(50, () => call(client, "file.read", { path: probe }));
  // Reads one after another while a rebuild reads all 10,000 documents again.
  let rebuilt = false;
  const rebuildStarted = performance.now();
  const rebuild = call(client, "library.index", { rebuild: true }).then((output) => {
    rebuilt = true;
    return { output, ms: performance.now() - rebuildStarted };
  });
  const during: number[] = [];
  while (!rebuilt) {
    const started = performance.now();
    await call(client, "file.read", { path: probe });
    if (!rebuilt) during.push(performance.now() - started);
  }
  const rebuildMs = (await rebuild).ms;
  await pool.stopAll();
  const label = `through the child (${sandbox})`;
  return [
    [
      `library.search ${label}, freshness check included (p50 / p99 of ${CHILD_SEARCHES})`,
      sandbox === "none" ? BEFORE.child : "-",
      `${ms(percentile(searches, 50))} / ${ms(percentile(searches, 99))}`,
    ],
    [
      `a new child's first library.search ${label}: no INDEX.md / INDEX.md up to date`,
      "-",
      `${ms(cold.elapsed)} / ${ms(warm.elapsed)}`,
    ],
    [
      `file.read ${label}: alone (p50) / while library.index rebuilds 10,000 (p50, slowest of ${during.length})`,
      "-",
      `${ms(percentile(reads, 50))} / ${ms(percentile(during, 50))}, ${ms(Math.max(...during))}; the rebuild took ${ms(rebuildMs)}`,
    ],
    [`child RSS after the searches ${label} (child and its sandbox)`, "-", `${rss.toFixed(0)} MiB`],
  ];
}

/** The event loop's longest delay over `ms` with nothing to do: what the machine alone adds to "longest block". */
async function idleDelay(ms: number): Promise<number> {
  return (await blocking(() => new Promise((resolve) => setTimeout(resolve, ms)))).blockMs;
}

export async function runLibraryBench(): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), "laoding-libbench-"));
  chmodSync(base, 0o755);
  const load = loadavg()[0]?.toFixed(1) ?? "?";
  const idleBefore = await idleDelay(3_000);
  const rows = [
    ...(await inProcess(base)),
    ...(await throughChild(base, "none")),
    ...(await throughChild(base, "bwrap")),
  ];
  rmSync(base, { recursive: true, force: true });
  const idleAfter = await idleDelay(3_000);
  rows.push([
    "control: this process idle for 3 s, the event loop's longest delay (before / after the run)",
    "-",
    `${ms(idleBefore)} / ${ms(idleAfter)}`,
  ]);
  return [
    `${DOCS.toLocaleString("en")} documents with a realistic frontmatter (title, keywords, summary, applicable, last_verified) and a 1.6 KB body; only the first 8 KiB of each is read. Searches cycle through 10 queries (Chinese, English, mixed, one without hits). "Before" is the previous version (stateless: every call checked every file, a stale index was regenerated on the child's thread, a search scanned every line), from this file's run of 2026-12-01; the two "this run" rows ran the old code again here. Longest block: the event loop's longest delay meanwhile (in-process), or the slowest call answered during the rebuild (through the child).`,
    "",
    `Other work (builds and test suites of other sessions) shared the machine's 2 cores during this run (load average ${load} at its start): figures are medians, and the slow tails are noisy.`,
    "",
    "| measure | before | now |",
    "|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}
