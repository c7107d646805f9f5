/**
 * What the async store seam costs on SQLite (issue 25): the orchestrator bench (zero-latency
 * model, one-tool turn, SQLite store) in the checkout from before the store became async
 * and in this one, alternating run by run so both see the same machine load, like
 * boundary-ab.ts. Prints a Markdown table of the medians and the after/before ratio.
 *
 *   git worktree add --detach .ab/82c7913 82c7913
 *   cp -al node_modules .ab/82c7913/node_modules && (cd .ab/82c7913 && npm run build)
 *   cp bench/orchestrator-round.ts .ab/82c7913/bench/
 *   npm run build && npx tsx bench/seam-ab.ts .ab/82c7913 [rounds]
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatMs, percentile } from "./stats.js";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const [beforeArg, roundsText = "3"] = process.argv.slice(2);
if (!beforeArg) throw new Error("usage: seam-ab.ts <checkout before the async store> [rounds]");
const beforeDir = resolve(beforeArg);
if (!existsSync(join(beforeDir, "bench/orchestrator-round.ts")))
  throw new Error(`copy bench/orchestrator-round.ts into ${beforeDir}/bench first`);
const rounds = Number(roundsText);
const commit = (dir: string) =>
  execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dir, encoding: "utf8" }).trim();

type Figures = { p50: number; p99: number };
function round(checkout: string): Figures {
  const tsx = join(HERE, "node_modules/.bin/tsx");
  return JSON.parse(
    execFileSync(tsx, [join(checkout, "bench/orchestrator-round.ts")], {
      cwd: checkout,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }),
  ) as Figures;
}

const figures: Record<"before" | "after", Figures[]> = { before: [], after: [] };
for (let index = 0; index < rounds; index += 1) {
  // Alternate which one goes first, so neither always gets the quieter half.
  const order: Array<["before" | "after", string]> =
    index % 2 === 0
      ? [
          ["before", beforeDir],
          ["after", HERE],
        ]
      : [
          ["after", HERE],
          ["before", beforeDir],
        ];
  for (const [label, checkout] of order) {
    const result = round(checkout);
    figures[label].push(result);
    process.stderr.write(
      `round ${index + 1}/${rounds} ${label}: p50 ${formatMs(result.p50)}, p99 ${formatMs(result.p99)}\n`,
    );
  }
}

const median = (label: "before" | "after", key: keyof Figures) =>
  percentile(
    figures[label].map((row) => row[key]),
    50,
  );
// The two runs of one round saw about the same machine: their ratio is the steadier figure.
const pairs = figures.after.map((after, index) => after.p50 / (figures.before[index] as Figures).p50);
const lines = [
  `Orchestrator bench (600 sequential messages after 50 warm-up, zero-latency model, one file_read through the toolhost per turn, SQLite store), median of ${rounds} interleaved runs each.`,
  "",
  "| checkout | per message p50 | p99 | runs (p50) |",
  "|---|---|---|---|",
  `| before: ${commit(beforeDir)} (synchronous store) | ${formatMs(median("before", "p50"))} | ${formatMs(median("before", "p99"))} | ${figures.before.map((row) => formatMs(row.p50)).join(", ")} |`,
  `| after: ${commit(HERE)} (async SqlDriver) | ${formatMs(median("after", "p50"))} | ${formatMs(median("after", "p99"))} | ${figures.after.map((row) => formatMs(row.p50)).join(", ")} |`,
  `| after/before | ${(median("after", "p50") / median("before", "p50")).toFixed(2)}x | ${(median("after", "p99") / median("before", "p99")).toFixed(2)}x | per round: ${pairs.map((ratio) => ratio.toFixed(2)).join(", ")} (median ${percentile(pairs, 50).toFixed(2)}x) |`,
];
process.stdout.write(`${lines.join("\n")}\n`);
