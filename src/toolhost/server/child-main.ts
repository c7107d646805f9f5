/**
 * The toolhost child: serves the protocol on stdin/stdout (stdout carries protocol
 * bytes only; logs go to stderr) for the one agent its start-up message names, and
 * exits when stdin closes, its parent dies or it is told to stop, killing its tool
 * processes first. It already runs with its agent's authority (see
 * sandbox/child-launch.ts); it never reads the bot's configuration.
 */
import { mkdirSync } from "node:fs";
import type { Writable } from "node:stream";
import type { Logger } from "pino";
import { BoundedMessageReader } from "../bounded-reader.js";
import { FramedMessageWriter } from "../framed-writer.js";
import { createProxiedFetch, directFetch } from "../net/proxied-fetch.js";
import { startProxyForwarder } from "../net/proxy-forwarder.js";
import { bwrapLauncher, bwrapServerLauncher, noneLauncher, noneServerLauncher } from "../sandbox/command-launchers.js";
import { killLeftovers, tasksBelow } from "../sandbox/leftover-processes.js";
import { PathSandbox } from "../sandbox/path-sandbox.js";
import type { ToolhostStartup } from "../sandbox/startup-message.js";
import { createShellRunner } from "../shell/shell-runner.js";
import { createTools } from "../tools/tool-registry.js";
import { createWebFetchTool } from "../tools/web-fetch.js";
import { answerBudget } from "../tools/truncate-output.js";
import { lazyMcpServers } from "./lazy-mcp-servers.js";
import { createSessionSetup } from "./session-setup.js";
import { serveToolhost } from "./toolhost-server.js";

/** How often the child checks that its parent is still alive (and whether it has gone quiet). */
const PARENT_CHECK_INTERVAL_MS = 500;
/** After stdin closes, requests already read get this long to answer before tools are killed. */
const DRAIN_ON_CLOSE_MS = 500;

export type ChildOptions = {
  startup: ToolhostStartup;
  logger: Logger;
  /** A full garbage collection (Node's `gc`, with --expose-gc): run once the child goes quiet after a burst. */
  collectGarbage?: (() => void) | undefined;
  stdin: NodeJS.ReadableStream;
  stdout: Writable;
};

/** Runs until the connection ends; resolves with the exit code. */
export async function runToolhostChild(options: ChildOptions): Promise<number> {
  const { startup, logger } = options;
  // With an allow list, the jail's only way out: loopback port -> the egress proxy's socket.
  const forwarder = startup.egress
    ? await startProxyForwarder({ socketPath: startup.egress.socketPath, logger })
    : undefined;
  const fetch = startup.egress ? createProxiedFetch({ socketPath: startup.egress.socketPath }) : undefined;
  const reachesNetwork = startup.network || forwarder !== undefined;
  // The library is a root only if it exists when the sandbox is built: create it on first use.
  if (startup.library) {
    try {
      mkdirSync(startup.library.dir, { recursive: true });
    } catch (error) {
      // The bot creates it at start-up; without it the library tools say what is missing.
      logger.warn({ err: error, library: startup.library.dir }, "cannot create the experience library folder");
    }
  }
  const sandbox = new PathSandbox(startup.roots);
  const workTree = sandbox.roots.find((root) => root.label === "working tree")?.path;
  if (!workTree)
    throw new Error(
      `the working tree ${startup.workTree} does not exist or cannot be entered by uid ${process.getuid?.()}`,
    );
  const commandOptions = {
    agentId: startup.agentId,
    home: workTree,
    memoryLimitBytes: startup.memoryLimitBytes,
    ...(forwarder ? { proxyUrl: forwarder.url } : {}),
  };
  const bwrapOptions = {
    ...commandOptions,
    writable: sandbox.roots.filter((root) => root.writable).map((root) => root.path),
    readOnly: [
      ...sandbox.roots.filter((root) => !root.writable).map((root) => root.path),
      ...(startup.codePaths ?? []),
    ],
    // With an allow list a command shares the jail's network namespace, where only the forwarder listens.
    network: reachesNetwork,
    tmpSizeBytes: startup.tmpSizeBytes,
    bwrapPath: startup.bwrapPath,
  };
  const noneOptions = {
    ...commandOptions,
    writable: bwrapOptions.writable,
    readOnly: bwrapOptions.readOnly,
    ownerPid: process.pid,
    ...(startup.commandNamespaces === true ? { namespaces: { bwrapPath: startup.bwrapPath } } : {}),
  };
  const launcher = startup.commandSandbox === "bwrap" ? bwrapLauncher(bwrapOptions) : noneLauncher(noneOptions);
  const serverLauncher =
    startup.commandSandbox === "bwrap" ? bwrapServerLauncher(bwrapOptions) : noneServerLauncher(noneOptions);
  // Never as root: a child run in-process (tests, by hand) would otherwise sweep the host.
  const uid = process.getuid?.();
  const sweeps = startup.ownUid === true && uid !== undefined && uid !== 0;
  const shell = createShellRunner(launcher, {
    ...(sweeps ? { killLeftovers: () => killLeftovers(uid) } : {}),
    ...(startup.tasksPerCall !== undefined ? { processShare: { maxTasks: startup.tasksPerCall, tasksBelow } } : {}),
  });

  const mcp = lazyMcpServers(async () =>
    (await import("../mcp-servers/mcp-servers.js")).createMcpServers({
      // "component" is the child's already (toolhost): a second one would repeat the key in every line.
      logger: logger.child({ subsystem: "mcp" }),
      workTree,
      launchStdio: (server) => {
        // A server not given a folder works in its private home, not in the agent's tree (command-launchers.ts).
        const own = server.folderGiven ? server.cwd : undefined;
        const launch = serverLauncher({
          argv: [server.command, ...server.args],
          env: server.env,
          ...(own ? { cwd: own } : {}),
        });
        return { ...launch, cwd: server.cwd };
      },
      ...(fetch ? { fetch } : startup.network ? { fetch: directFetch } : {}),
    }),
  );
  const reader = new BoundedMessageReader(options.stdin, startup.maxFrameBytes);
  const writer = new FramedMessageWriter(options.stdout, { batch: "none" });
  const server = serveToolhost({
    reader,
    writer,
    agentId: startup.agentId,
    tools: createTools({
      allowedCommands: startup.allowedCommands,
      network: reachesNetwork,
      library: startup.library,
      operatorTools: startup.operatorTools,
      refusals: forwarder,
      webFetch: fetch
        ? createWebFetchTool({ fetch })
        : startup.network
          ? createWebFetchTool({ fetch: directFetch })
          : undefined,
    }),
    mcp,
    sandbox,
    workTree,
    // An answer must fit a frame whatever TOOL_OUTPUT_MAX_BYTES says.
    limits: { ...startup.limits, outputMaxBytes: answerBudget(startup.limits.outputMaxBytes, startup.maxFrameBytes) },
    shell,
    logger,
    setupSession: createSessionSetup({ link: startup.sessionLink, library: startup.library, logger }),
  });
  logger.info(
    { sandbox: shell.mode, uid: process.getuid?.(), roots: sandbox.roots.map((root) => root.path) },
    "toolhost ready",
  );

  return await new Promise((resolve) => {
    let done = false;
    const parentPid = process.ppid;
    const finish = (code: number, why: string) => {
      if (done) return;
      done = true;
      clearInterval(parentWatch);
      shell.killAll();
      server.connection.dispose();
      logger.info({ why }, "toolhost exiting");
      // Servers get a moment to exit on their own; the jail's end (or --die-with-parent) takes any that do not.
      void Promise.allSettled([mcp.stopAll(), forwarder?.close()]).then(() => resolve(code));
    };
    reader.onError((error) => finish(2, `protocol error: ${error.message}`));
    server.connection.onClose(() => {
      // Requests read before the end of input still get their answers (by-hand use),
      // but a parent that died must not keep tools running for long.
      const drain = setTimeout(() => finish(0, "stdin closed"), DRAIN_ON_CLOSE_MS);
      // Every request read has been started (the endpoint starts them as they arrive).
      void server.idle().then(() => {
        clearTimeout(drain);
        finish(0, "stdin closed");
      });
    });
    // A burst of tool calls leaves garbage in the old generation that V8 may keep for many
    // seconds; every agent holds a child, so a child quiet for a check interval after a
    // burst collects it once and gives the memory back (bench/README.md). Heartbeat pings
    // are not a burst: they never cause a collection.
    let callsAtLastCheck = -1;
    let callsAtLastCollection = 0;
    const parentWatch = setInterval(() => {
      if (process.ppid !== parentPid) return finish(0, "parent died");
      const { toolCalls, inFlight } = server.activity();
      if (
        options.collectGarbage &&
        inFlight === 0 &&
        toolCalls === callsAtLastCheck &&
        toolCalls !== callsAtLastCollection
      ) {
        options.collectGarbage();
        callsAtLastCollection = toolCalls;
      }
      callsAtLastCheck = toolCalls;
    }, PARENT_CHECK_INTERVAL_MS);
    parentWatch.unref();
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => finish(0, signal));
  });
}
