/**
 * One run of the orchestrator bench (bench/orchestrator-bench.ts) in this checkout, its
 * per-message p50 and p99 in milliseconds as one JSON line: the round that seam-ab.ts
 * runs in two checkouts in turn (copied into the older one).
 */
import { runOrchestratorBench } from "./orchestrator-bench.js";

const table = await runOrchestratorBench();
const row = table.trim().split("\n").at(-1) ?? "";
const ms = (cell: string | undefined) => {
  const match = /([\d.]+)\s*(ms|µs)/.exec(cell ?? "");
  if (!match) throw new Error(`orchestrator-round: no time in "${cell}" (row: ${row})`);
  return Number(match[1]) / (match[2] === "µs" ? 1000 : 1);
};
const cells = row
  .split("|")
  .map((cell) => cell.trim())
  .filter((cell) => cell !== "");
process.stdout.write(`${JSON.stringify({ p50: ms(cells[0]), p99: ms(cells[1]) })}\n`);
