/**
 * Experience library: INDEX.md regeneration for 200 and 10,000 documents, the freshness
 * check on an up-to-date library of 10,000, and library.search over 10,000 documents,
 * in-process and through the real toolhost child (dist/, sandbox none; each call runs
 * the freshness check first, as in production).
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { runCli } from "../src/cli/run-cli.js";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { ensureFresh, rebuildIndex } from "../src/knowledge/library/library-index.js";
import { searchIndex } from "../src/knowledge/library/library-term-index.js";
import { prepareToolhostLaunches, spawnToolhostChild, type AgentLaunch } from "../src/runtime/toolhost-launch.js";
import { ToolhostPool } from "../src/toolhost/client/toolhost-pool.js";
import { readFileSync } from "node:fs";
import { formatMs, percentile, timeEach } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ENTRY = join(ROOT, "dist/cli/main.js");
const SEARCHES = 400;
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

function seedDocs(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  for (let index = 0; index < count; index += 1) {
    const topic = TOPICS[index % TOPICS.length] as string;
    const date = `20${20 + (index % 7)}-${String((index % 12) + 1).padStart(2, "0")}-${String((index % 28) + 1).padStart(2, "0")}`;
    const [first = "", second = ""] = topic.split(" ");
    writeFileSync(
      join(dir, `${date}-${first}-${index}.md`),
      `---\ntitle: ${topic} 实录 ${index}\nkeywords: ${first}, ${second}, case-${index}, deadlock-${index % 3 === 0 ? "yes" : "no"}\nsummary: ${topic} 的排查步骤与结论(第 ${index} 篇),rollback plan included\napplicable: backend\nlast_verified: ${date}\n---\n${"正文 body text. ".repeat(80)}\n`,
    );
  }
}

function median(values: number[]): number {
  return percentile(values, 50);
}

async function timeSync(rounds: number, run: () => unknown): Promise<number[]> {
  return timeEach(rounds, async () => run());
}

export async function runLibraryBench(): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), "laoding-libbench-"));
  chmodSync(base, 0o755);
  const small = join(base, "small");
  const large = join(base, "large");
  seedDocs(small, 200);
  seedDocs(large, 10_000);
  const locale = { locale: "zh" } as const;
  const regen200 = median(await timeSync(9, () => rebuildIndex(small, locale)));
  const regen10k = median(await timeSync(5, () => rebuildIndex(large, locale)));
  ensureFresh(large, locale);
  const freshness = await timeSync(21, () => {
    if (ensureFresh(large, locale).regenerated) throw new Error("the library should be up to date");
  });
  const indexText = readFileSync(join(large, "INDEX.md"), "utf8");
  let query = 0;
  const inProcess = await timeSync(SEARCHES, () =>
    searchIndex(indexText, QUERIES[(query += 1) % QUERIES.length] as string, 10),
  );

  // Through the real child: a seeded workspace whose agent main has the 10,000 documents.
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
  writeFileSync(join(workspaceDir, "configs/env"), "REACT_MAX_STEPS=4\nTOOLHOST_SANDBOX=none\nLOG_LEVEL=warn\n");
  const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  seedDocs(layout.agentTrees("main").experienceDir, 10_000);
  const launches = prepareToolhostLaunches({
    config: loaded.config,
    layout,
    agents: readAgentsFile(layout.agentsFile),
    cliEntry: ENTRY,
  });
  const pool = new ToolhostPool({
    settings: {
      callTimeoutMs: 60_000,
      heartbeatMs: 60_000,
      restartLimit: 3,
      restartWindowMs: 60_000,
      concurrency: 1,
      queueMax: 64,
      maxFrameBytes: 16 << 20,
      startTimeoutMs: 20_000,
      stopGraceMs: 2_000,
    },
    spawn: (agentId) => spawnToolhostChild(launches.agents.get(agentId) as AgentLaunch),
    logger: pino({ level: "silent" }),
  });
  const client = pool.client("main");
  const search = async () => {
    const result = await client.callTool({
      name: "library.search",
      args: { query: QUERIES[(query += 1) % QUERIES.length] as string },
    });
    if (!result.ok) throw new Error(`library.search failed: ${JSON.stringify(result)}`);
  };
  await search();
  await search();
  const throughChild = await timeEach(SEARCHES / 2, search);
  await pool.stopAll();

  return [
    `Documents with a realistic frontmatter (title, keywords, summary, applicable, last_verified) and a 1.6 KB body; only the first 8 KiB of each is read. ${SEARCHES} in-process searches and ${SEARCHES / 2} through the child, over 10 queries (Chinese, English, mixed, one without hits).`,
    "",
    "| measure | result |",
    "|---|---|",
    `| INDEX.md regeneration, 200 documents (median of 9) | ${formatMs(regen200)} |`,
    `| INDEX.md regeneration, 10,000 documents (median of 5) | ${formatMs(regen10k)} |`,
    `| freshness check, up-to-date library of 10,000 (median of 21) | ${formatMs(median(freshness))} |`,
    `| library.search over 10,000, in-process ranking only (p50 / p99) | ${formatMs(percentile(inProcess, 50))} / ${formatMs(percentile(inProcess, 99))} |`,
    `| library.search over 10,000 through the real child, freshness check included (p50 / p99) | ${formatMs(percentile(throughChild, 50))} / ${formatMs(percentile(throughChild, 99))} |`,
  ].join("\n");
}
