import { PassThrough } from "node:stream";
import { runCli } from "../../src/cli/run-cli.js";

export type CliRun = { code: number; stdout: string; stderr: string };

/** Runs the real CLI dispatcher in-process with captured streams. */
export async function runLaoding(
  args: string[],
  options: { repoRoot: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (chunk: Buffer) => out.push(chunk));
  stderr.on("data", (chunk: Buffer) => err.push(chunk));
  // Commands that read stdin (chat) see an empty input and end.
  const stdin = new PassThrough();
  stdin.end();
  const code = await runCli({
    args,
    env: { LOG_LEVEL: "silent", ...options.env },
    cwd: options.cwd ?? options.repoRoot,
    repoRoot: options.repoRoot,
    stdout,
    stderr,
    stdin,
  });
  return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}
