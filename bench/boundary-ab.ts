/**
 * What the sandbox boundary costs, measured fairly on a shared machine: the same round
 * (`boundary-round.ts`) runs against a checkout from before the boundary and against this
 * one, alternating round by round, so both see the same load. Prints a Markdown table of
 * medians and the after/before ratio per figure.
 *
 *   git worktree add --detach /tmp/before 0fb1349   # then npm ci, build, copy
 *   npx tsx bench/boundary-ab.ts /tmp/before [rounds]   # bench/file-tools-measure.ts and
 *                                                       # bench/boundary-round.ts into it
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FileToolFigures } from "./file-tools-measure.js";
import { formatMs, percentile } from "./stats.js";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const [beforeDir, roundsText = "5"] = process.argv.slice(2);
if (!beforeDir) throw new Error("usage: boundary-ab.ts <checkout before the boundary> [rounds]");
const rounds = Number(roundsText);

function round(checkout: string, mode: string): FileToolFigures {
  const tsx = join(HERE, "node_modules/.bin/tsx");
  return JSON.parse(
    execFileSync(tsx, [join(checkout, "bench/boundary-round.ts"), mode], {
      cwd: checkout,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }),
  ) as FileToolFigures;
}

const figures: Record<string, FileToolFigures[]> = {};
for (let index = 0; index < rounds; index += 1) {
  for (const mode of ["none", "bwrap"]) {
    // Alternate which one goes first, so neither always gets the quieter half.
    const order =
      index % 2 === 0
        ? [
            ["before", beforeDir],
            ["after", HERE],
          ]
        : [
            ["after", HERE],
            ["before", beforeDir],
          ];
    for (const [label, checkout] of order as Array<[string, string]>) {
      (figures[`${label} (${mode})`] ??= []).push(round(checkout, mode));
      process.stderr.write(`round ${index + 1}/${rounds} ${label} ${mode} done\n`);
    }
  }
}

const keys: Array<keyof FileToolFigures> = ["read8", "write8", "list8", "grep1", "shellP50", "shellP99"];
const median = (rows: FileToolFigures[], key: keyof FileToolFigures) =>
  percentile(
    rows.map((row) => row[key]),
    50,
  );
const cell = (key: keyof FileToolFigures, value: number) =>
  key.startsWith("shell") ? formatMs(value) : value.toFixed(0);
const lines = [
  `Median of ${rounds} interleaved rounds per row, each with a fresh workspace and child.`,
  "",
  "| child | file.read/s c=8 | file.write/s c=8 | file.list/s c=8 | file.grep/s c=1 | shell.exec p50 | shell.exec p99 |",
  "|---|---|---|---|---|---|---|",
];
for (const mode of ["none", "bwrap"]) {
  const before = figures[`before (${mode})`] as FileToolFigures[];
  const after = figures[`after (${mode})`] as FileToolFigures[];
  lines.push(`| before (${mode}) | ${keys.map((key) => cell(key, median(before, key))).join(" | ")} |`);
  lines.push(`| after (${mode}) | ${keys.map((key) => cell(key, median(after, key))).join(" | ")} |`);
  lines.push(
    `| after/before (${mode}) | ${keys.map((key) => `${(median(after, key) / median(before, key)).toFixed(2)}x`).join(" | ")} |`,
  );
}
process.stdout.write(`${lines.join("\n")}\n`);
