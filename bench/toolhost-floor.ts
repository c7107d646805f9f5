/**
 * What any toolhost can reach on this machine, with and without the audit rule:
 *
 *   npx tsx bench/toolhost-floor.ts [rounds]
 *
 * Three subjects, started once each and then interleaved round by round (2,000 reads of
 * 4 KiB at c=1, then at c=8, the order rotating), medians printed:
 * - the MCP SDK server, driven by the SDK's client, as in the toolhost bench;
 * - the floor: a child that answers one JSON line with `readFileSync`'s text, driven by a
 *   parent that only writes the line and matches the answer (no framing header,
 *   validation, sandbox, deadline, semaphore or audit);
 * - the floor with the audit rule of DECISIONS.md: the same, and each call's row is
 *   recorded in the real audit store (`openStore`, WAL) and committed before the call
 *   counts as done; rows answered in one turn share a transaction, as in the bot.
 * No design that commits each call's audit row before its result can beat the third row.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { systemClock } from "../src/store/clock.js";
import { openStore, type Store } from "../src/store/store.js";
import { percentile, throughput } from "./stats.js";
import { mcpChild } from "./toolhost-bench.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const rounds = Number(process.argv[2] ?? 7);
const CALLS = 2_000;

type Reader = { read(): Promise<unknown>; close(): Promise<void> | void };

function floorChild(file: string, store?: Store): Reader {
  const child = spawn(process.execPath, [join(ROOT, "bench/fixtures/floor-read-child.mjs")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const waiting = new Map<number, () => void>();
  let pending = "";
  let nextId = 0;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
      const answer = JSON.parse(pending.slice(0, end)) as { id: number };
      pending = pending.slice(end + 1);
      waiting.get(answer.id)?.();
      waiting.delete(answer.id);
    }
  });
  const request = () =>
    new Promise<void>((resolve) => {
      nextId += 1;
      waiting.set(nextId, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: nextId, method: "read", params: { path: file } })}\n`);
    });
  return {
    read: store
      ? async () => {
          const started = systemClock.now();
          await request();
          await store.toolCalls.record({
            traceId: "bench",
            agentId: "main",
            tool: "file.read",
            argsDigest: "0123456789abcdef",
            ok: true,
            durationMs: systemClock.now() - started,
          });
        }
      : request,
    close: () => void child.stdin.end(),
  };
}

const dir = mkdtempSync(join(tmpdir(), "laoding-floor-"));
const file = join(dir, "bench.txt");
writeFileSync(file, "x".repeat(4096));
// The database where the bot keeps it: on the disk, not in memory.
const store = await openStore(join(dir, "laoding.db"), systemClock);
const mcp = await mcpChild(
  "MCP SDK server",
  () =>
    new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, "bench/fixtures/mcp-read-server.mjs")],
      stderr: "inherit",
    }),
  "read_file",
  file,
).start();
const subjects: { name: string; reader: Reader }[] = [
  { name: "MCP SDK server", reader: mcp },
  { name: "floor (readFileSync, one JSON line each way)", reader: floorChild(file) },
  { name: "floor + audit row committed before the result", reader: floorChild(file, store) },
];
for (const { reader } of subjects) await throughput(CALLS, 8, () => reader.read());
const rates = subjects.map(() => ({ c1: [] as number[], c8: [] as number[] }));
for (let round = 0; round < rounds; round += 1) {
  for (let turn = 0; turn < subjects.length; turn += 1) {
    const index = (round + turn) % subjects.length;
    const { reader } = subjects[index] as (typeof subjects)[number];
    const rate = rates[index] as (typeof rates)[number];
    rate.c1.push(await throughput(CALLS, 1, () => reader.read()));
    rate.c8.push(await throughput(CALLS, 8, () => reader.read()));
  }
  process.stderr.write(`  round ${round + 1}/${rounds}\n`);
}
for (const { reader } of subjects) await reader.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const median = (values: number[]) => percentile(values, 50);
const reference = rates[0] as (typeof rates)[number];
console.log("| subject | read/s c=1 | read/s c=8 | c=1 vs MCP | c=8 vs MCP |");
console.log("|---|---|---|---|---|");
subjects.forEach(({ name }, index) => {
  const rate = rates[index] as (typeof rates)[number];
  console.log(
    `| ${name} | ${median(rate.c1).toFixed(0)} | ${median(rate.c8).toFixed(0)} | ${(median(rate.c1) / median(reference.c1)).toFixed(2)}x | ${(median(rate.c8) / median(reference.c8)).toFixed(2)}x |`,
  );
});
