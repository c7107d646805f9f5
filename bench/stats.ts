/** Small statistics helpers for the benchmarks. */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem, type } from "node:os";
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function formatMs(value: number): string {
  return value < 1 ? `${(value * 1000).toFixed(0)} µs` : `${value.toFixed(2)} ms`;
}

export async function timeEach(count: number, run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

/** Calls per second with `concurrency` workers sharing `total` calls. */
export async function throughput(total: number, concurrency: number, run: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        await run();
      }
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** RSS of a process and every process below it (a sandboxed child is bwrap, its init, then Node). */
export function treeRssMb(pid: number): number {
  let total = rssMb(pid);
  if (Number.isNaN(total)) return total;
  for (const child of childrenOf(pid)) {
    const rss = treeRssMb(child);
    if (!Number.isNaN(rss)) total += rss;
  }
  return total;
}

/** The processes a process started (of all its threads); none once it is gone. */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
        .split(" ")
        .filter((id) => id.trim() !== "")
        .map(Number),
    );
  } catch {
    return [];
  }
}

export function machine(): string {
  return `${cpus()[0]?.model ?? "cpu"} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${type()} ${release()}`;
}

/** Replaces (or appends) the section between `<!-- name:start -->` and `<!-- name:end -->`. */
export function writeSection(readmePath: string, name: string, markdown: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let text = readFileSync(readmePath, "utf8");
  const block = `${start}\n${markdown.trim()}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  text =
    from >= 0 && to > from
      ? `${text.slice(0, from)}${block}${text.slice(to + end.length)}`
      : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(readmePath, text);
}
