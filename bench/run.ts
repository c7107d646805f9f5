/**
 * Runs the benchmarks (never part of `npm test`) and writes each one's table into
 * bench/README.md with the machine and date. `npm run bench [name ...]` runs some.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { machine, writeSection } from "./stats.js";
import { runChannelsBench } from "./channels-bench.js";
import { runGapsBench } from "./gaps-bench.js";
import { runLibraryBench } from "./library-bench.js";
import { runOrchestratorBench } from "./orchestrator-bench.js";
import { runReachBench } from "./reach-bench.js";
import { runReplicasBench } from "./replicas-bench.js";
import { runBoundaryBench, runToolhostBench } from "./toolhost-bench.js";

const README = join(fileURLToPath(new URL(".", import.meta.url)), "README.md");

const SUITES: Record<string, { title: string; run: () => Promise<string> }> = {
  toolhost: { title: "ToolHost round-trips, throughput, cold start, memory", run: runToolhostBench },
  boundary: {
    title: "Sandbox boundary: file tools and shell commands through the jailed child",
    run: runBoundaryBench,
  },
  orchestrator: {
    title: "Orchestrator overhead per message (zero-latency model, one-tool turn)",
    run: runOrchestratorBench,
  },
  gaps: { title: "Capability gaps: record and evaluate a cluster at scale", run: runGapsBench },
  library: {
    title: "Experience library: INDEX.md regeneration, freshness check, library.search",
    run: runLibraryBench,
  },
  channels: {
    title: "Chat channels end to end (Telegram fake on loopback, zero-latency model)",
    run: runChannelsBench,
  },
  replicas: { title: "Replicas on PostgreSQL: messages/s, 50 chats, zero-latency model", run: runReplicasBench },
  reach: {
    title: "Reach: web.fetch through the egress proxy, MCP tool calls through the toolhost child",
    run: runReachBench,
  },
};

const wanted = process.argv.slice(2);
for (const [name, suite] of Object.entries(SUITES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  process.stderr.write(`bench: running ${name}...\n`);
  const table = await suite.run();
  const header = `## ${suite.title}\n\nMeasured ${new Date().toISOString().slice(0, 10)} on ${machine()}.\n\n`;
  writeSection(README, name, `${header}${table}`);
  process.stdout.write(`${header}${table}\n\n`);
}
