/**
 * The read ratio against the MCP SDK server, measured fairly on a shared machine:
 *
 *   npx tsx bench/toolhost-ab.ts [rounds] [none|bwrap] [variant ...]
 *
 * starts the MCP SDK server and laoding's child (this checkout's dist/, then each variant:
 * another build's dist/cli/main.js, which must live inside this checkout so that it
 * finds node_modules; `flags:--a,--b` for this build with more Node flags; or
 * `checkout:<dir>` for another built checkout's parent and child both, through its own
 * bench/toolhost-bench.ts) once each, warms them up, then alternates rounds of 2,000
 * reads at c=1 and c=8 between them, the order rotating, and prints the median reads
 * per second, the CPU time per call of the parent and of the child (main threads), and
 * the ratio to the MCP server. On this VM a single run moves by ±30%; interleaved
 * medians of the same build move by a few percent.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { childrenOf, percentile, throughput, treeRssMb } from "./stats.js";
import { laodingChild, mcpChild, seedWorkspace } from "./toolhost-bench.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const [roundsText = "7", sandboxText = "none", ...otherEntries] = process.argv.slice(2);
const rounds = Number(roundsText);
const sandbox = sandboxText === "bwrap" ? "bwrap" : "none";
const CALLS = 2_000;

/** CPU time of a process's main thread in µs (schedstat's first field is ns on the CPU). */
const cpuUs = (pid: number | "self") => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000;

type Figures = { c1: number[]; c8: number[]; cpu1: number[][]; cpu8: number[][] };

/** The process that does the work: the last one down the tree (bwrap, its init, then Node). */
function worker(pid: number): number {
  for (let children = childrenOf(pid); children.length > 0; children = childrenOf(pid))
    pid = children[children.length - 1] as number;
  return pid;
}

async function measured(parent: number, work: () => Promise<number>): Promise<[number, number[]]> {
  const pid = worker(parent);
  const before = [cpuUs("self"), cpuUs(pid)];
  const rate = await work();
  const after = [cpuUs("self"), cpuUs(pid)];
  return [rate, after.map((value, index) => (value - (before[index] as number)) / CALLS)];
}

const { file } = await seedWorkspace("none");
const ENTRY = join(ROOT, "dist/cli/main.js");
type Variant = { name: string; start: () => ReturnType<typeof laodingChild> };
const variants: Variant[] = [
  { name: "dist", start: () => laodingChild(sandbox) },
  ...otherEntries.map((variant): Variant => {
    if (variant.startsWith("flags:"))
      return { name: variant, start: () => laodingChild(sandbox, ENTRY, variant.slice("flags:".length).split(",")) };
    if (variant.startsWith("checkout:")) {
      const dir = resolve(variant.slice("checkout:".length));
      return {
        name: variant,
        start: async () =>
          ((await import(join(dir, "bench/toolhost-bench.ts"))) as { laodingChild: typeof laodingChild }).laodingChild(
            sandbox,
            join(dir, "dist/cli/main.js"),
          ),
      };
    }
    return { name: variant, start: () => laodingChild(sandbox, resolve(variant)) };
  }),
];
const laodings = await Promise.all(variants.map((variant) => variant.start()));
const subjects = [
  mcpChild(
    "MCP SDK server",
    () =>
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, "bench/fixtures/mcp-read-server.mjs")],
        stderr: "inherit",
      }),
    "read_file",
    file,
  ),
  ...laodings,
];
const names = ["MCP SDK server", ...variants.map((variant) => `laoding (${sandbox}) ${variant.name}`)];
const started = await Promise.all(subjects.map((subject) => subject.start()));
for (const child of started) await throughput(CALLS, 8, () => child.read());
const figures: Figures[] = started.map(() => ({ c1: [], c8: [], cpu1: [], cpu8: [] }));
for (let round = 0; round < rounds; round += 1) {
  for (let turn = 0; turn < started.length; turn += 1) {
    const index = (round + turn) % started.length;
    const child = started[index] as (typeof started)[number];
    const figure = figures[index] as Figures;
    const [c1, cpu1] = await measured(child.pid(), () => throughput(CALLS, 1, () => child.read()));
    const [c8, cpu8] = await measured(child.pid(), () => throughput(CALLS, 8, () => child.read()));
    figure.c1.push(c1);
    figure.c8.push(c8);
    figure.cpu1.push(cpu1);
    figure.cpu8.push(cpu8);
  }
  process.stderr.write(`  round ${round + 1}/${rounds}\n`);
}
const rss = started.map((child) => treeRssMb(child.pid()));
for (const child of started) await child.close();
for (const laoding of laodings) laoding.cleanup();

const median = (values: number[]) => percentile(values, 50);
const cpu = (samples: number[][], side: number) => median(samples.map((sample) => sample[side] as number)).toFixed(0);
const mcp = figures[0] as Figures;
console.log(
  "| subject | read/s c=1 | read/s c=8 | CPU µs/call c=1 (parent / child) | c=8 | child RSS | c=1 vs MCP | c=8 vs MCP |",
);
console.log("|---|---|---|---|---|---|---|---|");
figures.forEach((figure, index) => {
  console.log(
    `| ${names[index]} | ${median(figure.c1).toFixed(0)} | ${median(figure.c8).toFixed(0)} | ${cpu(figure.cpu1, 0)} / ${cpu(figure.cpu1, 1)} | ${cpu(figure.cpu8, 0)} / ${cpu(figure.cpu8, 1)} | ${(rss[index] as number).toFixed(0)} MiB | ${(median(figure.c1) / median(mcp.c1)).toFixed(2)}x | ${(median(figure.c8) / median(mcp.c8)).toFixed(2)}x |`,
  );
});
