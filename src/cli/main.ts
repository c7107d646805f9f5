#!/usr/bin/env node
/** Process entry of `laoding`: the only place that touches process.argv and exit. */
import { REPO_ROOT } from "./cli-context.js";
import { runCli } from "./run-cli.js";

// `laoding config | head` closes the pipe early: that is not an error worth a stack.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await runCli({
  args: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  repoRoot: REPO_ROOT,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
process.exitCode = code;
