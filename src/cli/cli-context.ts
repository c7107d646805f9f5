import { readFileSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What a command gets from the outside world; tests build their own. */
export type CliContext = {
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  repoRoot: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /**
   * Secret values this run knows: runCli starts it with the secret variables of `env`, and
   * bootstrap adds the loaded configuration's, so the error printer can keep them all out.
   */
  secrets?: Set<string>;
};

/** The package root: this file lives in src/cli/ (tsx) or dist/cli/ (built). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** This checkout's version (package.json), for health answers and MCP's server info. */
export function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version?: string }).version ?? "unknown"
    );
  } catch {
    return "unknown";
  }
}

/** The CLI entry file, for starting toolhost children (main.ts under tsx, main.js built). */
export const CLI_ENTRY = resolve(
  dirname(fileURLToPath(import.meta.url)),
  `main${extname(fileURLToPath(import.meta.url))}`,
);

/** A wrong command line: the CLI prints the command's usage and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

export type Command = {
  name: string;
  summary: string;
  usage: string;
  run(context: CliContext): Promise<number>;
};

export function writeLine(stream: NodeJS.WritableStream, line = ""): void {
  stream.write(`${line}\n`);
}
