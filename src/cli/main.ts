#!/usr/bin/env node
/** Process entry of `laoding`: the only place that touches process.argv and exit. */

// In toolhost mode stdout carries protocol bytes only: route console.* to stderr before
// any other module runs, so a stray console.log cannot corrupt the stream.
if (process.argv[2] === "toolhost") {
  const { routeConsoleToStderr } = await import("../toolhost/server/route-console.js");
  routeConsoleToStderr();
}

const { REPO_ROOT } = await import("./cli-context.js");
const { runCli } = await import("./run-cli.js");

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
// The toolhost exits as soon as it is done: its parent may be gone and nothing else matters.
if (process.argv[2] === "toolhost") process.exit(code);
