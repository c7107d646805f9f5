/**
 * The file-tool and shell measurements of the boundary benchmark, kept free of project
 * imports so the very same file can be run against an older checkout (the "before"
 * figures in bench/README.md were taken that way).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { percentile, throughput, timeEach } from "./stats.js";

export type ToolCaller = {
  callTool(request: { name: string; args: Record<string, unknown> }): Promise<{ ok: boolean }>;
};

export type FileToolFigures = {
  read8: number;
  write8: number;
  list8: number;
  grep1: number;
  shellP50: number;
  shellP99: number;
};

export const FILE_CALLS = 3_000;
export const SHELL_CALLS = 150;

/** Seeds `dir` (inside the agent's work tree) with a 4 KiB file and a folder of 50 small files. */
export function seedFileToolTree(dir: string): void {
  mkdirSync(join(dir, "many"), { recursive: true });
  writeFileSync(join(dir, "bench.txt"), "x".repeat(4096));
  for (let index = 0; index < 50; index += 1)
    writeFileSync(join(dir, "many", `f${index}.txt`), `line ${index}\nneedle ${index}\n`);
}

export async function measureFileTools(client: ToolCaller, dir: string): Promise<FileToolFigures> {
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, args });
    if (!result.ok) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
  };
  let written = 0;
  const read8 = await throughput(FILE_CALLS, 8, () => call("file.read", { path: join(dir, "bench.txt") }));
  const write8 = await throughput(FILE_CALLS, 8, () =>
    call("file.write", { path: join(dir, "out", `w${(written += 1) % 64}.txt`), content: "y".repeat(4096) }),
  );
  const list8 = await throughput(FILE_CALLS, 8, () => call("file.list", { path: join(dir, "many") }));
  const grep1 = await throughput(FILE_CALLS / 10, 1, () =>
    call("file.grep", { pattern: "needle 4", path: join(dir, "many") }),
  );
  const shell = await timeEach(SHELL_CALLS, () => call("shell.exec", { command: "true" }));
  return { read8, write8, list8, grep1, shellP50: percentile(shell, 50), shellP99: percentile(shell, 99) };
}
