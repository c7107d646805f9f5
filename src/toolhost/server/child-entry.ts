/**
 * Process entry of a toolhost child. It loads only the toolhost's own modules, takes its
 * whole setup from the start-up message in its environment (then removes it), and never
 * reads an env file or the bot's configuration. stdout carries protocol bytes only:
 * console.* goes to stderr before any other module runs.
 */
import { routeConsoleToStderr } from "./route-console.js";

routeConsoleToStderr();

const { pino } = await import("pino");
const { parseStartupMessage, STARTUP_VARIABLE } = await import("../sandbox/startup-message.js");
const { runToolhostChild } = await import("./child-main.js");

let code: number;
try {
  const startup = parseStartupMessage(process.env[STARTUP_VARIABLE]);
  delete process.env[STARTUP_VARIABLE];
  if (startup.ownUid) process.umask(0o077);
  // Start libuv's thread pool now: under a process limit a fork bomb in a command could
  // otherwise leave no room for the threads the first asynchronous call needs.
  await (await import("node:fs/promises")).stat("/");
  const logger = pino(
    { level: startup.logLevel, base: { pid: process.pid, component: "toolhost", agentId: startup.agentId } },
    pino.destination({ fd: 2, sync: true }),
  );
  code = await runToolhostChild({
    startup,
    logger,
    stdin: process.stdin,
    stdout: process.stdout,
    collectGarbage: fullCollection(),
  });
} catch (error) {
  process.stderr.write(`laoding toolhost: ${(error as Error).message}\n`);
  code = 1;
}
/** Node's `gc`, there when the launch passed --expose-gc (toolhost-launch.ts). */
function fullCollection(): (() => void) | undefined {
  const gc = globalThis.gc;
  return gc ? () => void gc() : undefined;
}

// Its parent may be gone and nothing else matters: exit as soon as it is done.
process.exit(code);
