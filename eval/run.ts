/**
 * `npm run eval`: the efficacy harness (never part of `npm test`). With `--json` it prints
 * one JSON object and nothing else; without, a summary, and the results with learning
 * curves are written into eval/README.md. `--seeds N` and `--tasks N` shorten a run.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runEval, type EvalResult } from "./harness.js";
import { ARMS } from "./run-arm.js";
import { WORLD } from "./world.js";

const { values } = parseArgs({
  options: { json: { type: "boolean" }, seeds: { type: "string" }, tasks: { type: "string" } },
  strict: true,
});
const seeds = values.seeds ? Number(values.seeds) : WORLD.seeds;
const tasks = values.tasks ? Number(values.tasks) : WORLD.tasks;
if (!Number.isInteger(seeds) || seeds < 1 || !Number.isInteger(tasks) || tasks < WORLD.window) {
  process.stderr.write(`eval: --seeds must be a positive whole number and --tasks at least ${WORLD.window}\n`);
  process.exit(2);
}
const started = Date.now();
const result = await runEval({
  seeds,
  tasks,
  ...(values.json ? {} : { onProgress: (line: string) => process.stderr.write(`${line}\n`) }),
});
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const text = resultsMarkdown(result, Date.now() - started);
  process.stdout.write(`${text}\n`);
  if (seeds === WORLD.seeds && tasks === WORLD.tasks) writeResults(text);
}

function resultsMarkdown(result: EvalResult, elapsedMs: number): string {
  const header = `| arm | last-window success | repeat-failure rate | lessons created | deprecated | ${result.arms.none.curve.map((_, index) => `w${index + 1}`).join(" | ")} |`;
  const rule = `|${"---|".repeat(5 + result.arms.none.curve.length)}`;
  const rows = ARMS.map((arm) => {
    const summary = result.arms[arm];
    return `| ${arm} | ${pct(summary.lastWindowSuccess)} | ${pct(summary.repeatFailureRate)} | ${summary.lessonsCreated} | ${summary.lessonsDeprecated} | ${summary.curve.map(pct).join(" | ")} |`;
  });
  return [
    `Measured ${new Date().toISOString().slice(0, 10)}: ${result.seeds} seeds × ${result.tasks} tasks × ${ARMS.length} arms in ${Math.round(elapsedMs / 1000)} s (shared, loaded 2-core machine).`,
    "",
    header,
    rule,
    ...rows,
    "",
    `- full vs none, last window: ${signed(result.fullVsNone.lastWindowGain)} (95% interval ${signed(result.fullVsNone.interval[0])} to ${signed(result.fullVsNone.interval[1])}, paired by seed)`,
    `- harmful lessons shown at least once: ${result.harmful.lessons}; most injections before deprecation: ${result.harmful.maxInjectionsToDeprecate}; never deprecated: ${result.harmful.notDeprecated}`,
    `- effect report (treatment − holdout, full arm, pooled): estimated ${signed(result.report.estimatedEffect)}, true ${signed(result.report.trueEffect)}`,
    `- citation lines that reached a user: ${result.citationLeaks}`,
    `- digest ${result.digest}`,
  ].join("\n");
}

function writeResults(text: string): void {
  const file = join(fileURLToPath(new URL(".", import.meta.url)), "README.md");
  const current = readFileSync(file, "utf8");
  const start = "<!-- results:start -->";
  const end = "<!-- results:end -->";
  const next = current.includes(start)
    ? `${current.slice(0, current.indexOf(start) + start.length)}\n${text}\n${current.slice(current.indexOf(end))}`
    : `${current}\n${start}\n${text}\n${end}\n`;
  writeFileSync(`${file}.tmp`, next);
  renameSync(`${file}.tmp`, file);
}

function pct(value: number): string {
  return `${Math.round(value * 1000) / 10}%`;
}

function signed(value: number): string {
  const points = Math.round(value * 1000) / 10;
  return `${points >= 0 ? "+" : ""}${points} pts`;
}
