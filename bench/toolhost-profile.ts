/**
 * Where a tool call's time goes: `npx tsx bench/toolhost-profile.ts [none|bwrap] [concurrency]`
 * runs 10,000 reads of 4 KiB (default c=8) through the supervised client with its audit trail, with
 * `--cpu-prof` on the built child and a CPU profile of this (parent) process, and prints
 * the self time per function and per package of each side. Profiles land in
 * $PROFILE_DIR (default /tmp/laoding-profile).
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { pino } from "pino";
import { readAgentsFile } from "../src/config/agents.js";
import { loadConfig } from "../src/config/load-config.js";
import { createRuntimeLayout } from "../src/config/runtime-layout.js";
import { prepareToolhostLaunches, spawnToolhostChild } from "../src/runtime/toolhost-launch.js";
import { systemClock } from "../src/store/clock.js";
import { openStore } from "../src/store/store.js";
import { ToolhostPool } from "../src/toolhost/client/toolhost-pool.js";
import { throughput } from "./stats.js";
import { seedWorkspace } from "./toolhost-bench.js";

const ROOT = new URL("..", import.meta.url).pathname;
const READS = 10_000;
const sandbox = process.argv[2] === "bwrap" ? "bwrap" : "none";
const concurrency = Number(process.argv[3] ?? 8);
const dir = process.env.PROFILE_DIR ?? "/tmp/laoding-profile";
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, "child"), { recursive: true });
// The child runs as the agent's uid: it must be able to write its profile.
chmodSync(join(dir, "child"), 0o1777);

const { workspaceDir, file } = await seedWorkspace(sandbox);
const loaded = loadConfig({ env: {}, repoRoot: ROOT, cwd: ROOT, workspaceDir });
const layout = createRuntimeLayout(workspaceDir, loaded.config);
const launches = prepareToolhostLaunches({
  config: loaded.config,
  layout,
  agents: readAgentsFile(layout.agentsFile),
  cliEntry: join(ROOT, "dist/cli/main.js"),
});
const launch = launches.agents.get("main");
if (!launch) throw new Error("no launch for agent main");
const nodeAt = launch.launch.args.lastIndexOf(process.execPath);
launch.launch.args.splice(nodeAt + 1, 0, "--cpu-prof", `--cpu-prof-dir=${join(dir, "child")}`);
if (sandbox === "bwrap") launch.launch.args.splice(0, 0, "--bind", join(dir, "child"), join(dir, "child"));

const store = await openStore(join(workspaceDir, "..", "audit.db"), systemClock);
const pool = new ToolhostPool({
  settings: {
    callTimeoutMs: 30_000,
    heartbeatMs: 60_000,
    restartLimit: 3,
    restartWindowMs: 60_000,
    concurrency: 8,
    queueMax: 64,
    maxFrameBytes: 16 << 20,
    startTimeoutMs: 20_000,
    stopGraceMs: 5_000,
  },
  spawn: () => spawnToolhostChild(launch),
  logger: pino({ level: "silent" }),
  audit: store.toolCalls,
});
const client = pool.client("main");
const read = async () => {
  const result = await client.callTool({
    name: "file.read",
    args: { path: file },
    traceId: "profile",
    cwd: join(dirname(file), "profile-c1"),
  });
  if (!result.ok) throw new Error(JSON.stringify(result));
};
await throughput(500, 8, read);
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.start");
const perSecond = await throughput(READS, concurrency, read);
const { profile } = await session.post("Profiler.stop");
writeFileSync(join(dir, "parent.cpuprofile"), JSON.stringify(profile));
await pool.stopAll();
await store.close();
rmSync(join(workspaceDir, ".."), { recursive: true, force: true });

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number };
function summarize(path: string, title: string): void {
  const data = JSON.parse(readFileSync(path, "utf8")) as { nodes: Node[]; startTime: number; endTime: number };
  const total = data.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const node of data.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\//, "").replace(ROOT, "");
    const pkg =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ??
      (where.startsWith("node:")
        ? "node core"
        : where === ""
          ? `(${functionName || "native"})`
          : where.startsWith("dist/") || where.startsWith("src/")
            ? "laoding"
            : where);
    byFunction.set(
      `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`,
      (byFunction.get(`${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`) ?? 0) + hits,
    );
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
  }
  const top = (map: Map<string, number>, count: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, hits]) => `  ${((hits / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  process.stdout.write(
    `\n${title} (${total} samples)\nby package:\n${top(byPackage, 12).join("\n")}\nby function (self):\n${top(byFunction, 30).join("\n")}\n`,
  );
}
process.stdout.write(`${READS} reads at c=${concurrency} (${sandbox}): ${perSecond.toFixed(0)}/s while profiling\n`);
summarize(join(dir, "parent.cpuprofile"), "parent");
const childProfile = readdirSync(join(dir, "child")).find((name) => name.endsWith(".cpuprofile"));
if (childProfile) summarize(join(dir, "child", childProfile), "child");
else process.stdout.write("\nchild: no profile written (did it exit cleanly?)\n");
