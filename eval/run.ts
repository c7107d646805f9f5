/**
 * `npm run eval`: the efficacy harness (never part of `npm test`). With `--json` it prints
 * one JSON object and nothing else; without, a summary, and the results with learning
 * curves are written into eval/README.md. `--seeds N` and `--tasks N` shorten a run;
 * `--arms full,addOnly` runs only those arms (README results need every arm).
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runEval, type ArmSummary, type EvalResult, type HarmfulSummary } from "./harness.js";
import { ARMS, LEARNING_ARMS, type Arm } from "./run-arm.js";
import { WORLD } from "./world.js";

const { values } = parseArgs({
  options: {
    json: { type: "boolean" },
    seeds: { type: "string" },
    tasks: { type: "string" },
    arms: { type: "string" },
  },
  strict: true,
});
const arms = values.arms ? values.arms.split(",").map((arm) => arm.trim()) : [...ARMS];
const unknown = arms.filter((arm) => !(ARMS as readonly string[]).includes(arm));
if (unknown.length > 0 || arms.length === 0) {
  process.stderr.write(`eval: unknown arm ${unknown.join(", ")}; --arms takes a comma list of ${ARMS.join(", ")}\n`);
  process.exit(2);
}
const chosen = ARMS.filter((arm) => arms.includes(arm));
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
  arms: chosen,
  ...(values.json ? {} : { onProgress: (line: string) => process.stderr.write(`${line}\n`) }),
});
if (values.json) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else {
  const text = resultsMarkdown(result, Date.now() - started);
  process.stdout.write(`${text}\n`);
  if (seeds === WORLD.seeds && tasks === WORLD.tasks && chosen.length === ARMS.length) writeResults(text);
}

function resultsMarkdown(result: EvalResult, elapsedMs: number): string {
  const ran = ARMS.filter((arm) => result.arms[arm] !== undefined);
  const windows = result.arms[ran[0] as Arm]?.curve.length ?? 0;
  const header = `| arm | last-window success | repeat-failure rate | lessons created | deprecated | ${Array.from({ length: windows }, (_, index) => `w${index + 1}`).join(" | ")} |`;
  const rule = `|${"---|".repeat(5 + windows)}`;
  const rows = ran.map((arm) => {
    const summary = result.arms[arm] as ArmSummary;
    return `| ${arm} | ${pct(summary.lastWindowSuccess)} | ${pct(summary.repeatFailureRate)} | ${summary.lessonsCreated} | ${summary.lessonsDeprecated} | ${summary.curve.map(pct).join(" | ")} |`;
  });
  const learning = ran.filter((arm) => LEARNING_ARMS.includes(arm));
  const lifecycle = learning.map((arm) => {
    const summary = result.arms[arm] as ArmSummary;
    const harmful = result.harmful.byArm[arm] as HarmfulSummary;
    return `| ${arm} | ${harmful.lessons} | ${harmful.maxUsesToDeprecate} (${harmful.maxUsesBySeed.join(", ")}) | ${harmful.notDeprecated} | ${summary.helpfulLessons} | ${summary.helpfulDeprecated} (${summary.helpfulDeprecations}) | ${summary.citationLeaks} |`;
  });
  return [
    `Measured ${new Date().toISOString().slice(0, 10)}: ${result.seeds} seeds × ${result.tasks} tasks × ${ran.length} arms in ${Math.round(elapsedMs / 1000)} s (shared, loaded 2-core machine).`,
    "",
    header,
    rule,
    ...rows,
    "",
    "Lessons by outcome, all seeds (uses: treatment injections whose task has an outcome; most uses per seed in brackets; helpful deprecated when the run ended, deprecations in all in brackets):",
    "",
    "| arm | harmful shown | most uses before deprecation | harmful never deprecated | helpful lessons | helpful deprecated | citation leaks |",
    `|${"---|".repeat(7)}`,
    ...lifecycle,
    "",
    ...(result.fullVsNone
      ? [
          `- full vs none, last window: ${signed(result.fullVsNone.lastWindowGain)} (95% interval ${signed(result.fullVsNone.interval[0])} to ${signed(result.fullVsNone.interval[1])}, paired by seed)`,
        ]
      : []),
    ...(result.arms.full
      ? [
          `- full arm, harmful lessons shown at least once: ${result.harmful.lessons}; most injections before deprecation: ${result.harmful.maxInjectionsToDeprecate}; never deprecated: ${result.harmful.notDeprecated}`,
        ]
      : []),
    ...(result.report
      ? [
          `- effect report (treatment − holdout, full arm, pooled): estimated ${signed(result.report.estimatedEffect)}, true ${signed(result.report.trueEffect)}`,
        ]
      : []),
    `- citation text that reached a user or the store (answers and stored messages, all arms): ${result.citationLeaks}`,
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
