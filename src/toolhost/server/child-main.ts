/**
 * `laoding toolhost --agent <id>`: the child process. It reads the same configuration as
 * the parent, serves the protocol on stdin/stdout (stdout carries protocol bytes only;
 * logs go to stderr), and exits when stdin closes, its parent dies or it is told to stop,
 * killing its tool processes first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { StreamMessageWriter } from "vscode-jsonrpc/node";
import type { AgentDefinition } from "../../config/agents.js";
import type { Config } from "../../config/load-config.js";
import { EXPERIENCE_LINK_NAME, type RuntimeLayout } from "../../config/runtime-layout.js";
import { BoundedMessageReader } from "../bounded-reader.js";
import { prepareSandbox, type SandboxRequest } from "../os-sandbox.js";
import { PathSandbox, type SandboxRoot } from "../path-sandbox.js";
import { createShellRunner } from "../shell/shell-runner.js";
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from "../tools/define-tool.js";
import { createTools } from "../tools/tool-registry.js";
import { serveToolhost } from "./toolhost-server.js";

/** How often the child checks that its parent is still alive. */
const PARENT_CHECK_INTERVAL_MS = 500;
/** After stdin closes, requests already read get this long to answer before tools are killed. */
const DRAIN_ON_CLOSE_MS = 500;

export type ChildOptions = {
  agent: AgentDefinition;
  config: Config;
  layout: RuntimeLayout;
  logger: Logger;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
};

/** The folders agent A may touch, most specific last; base skills are read-only. */
export function agentRoots(layout: RuntimeLayout, agentId: string): SandboxRoot[] {
  const trees = layout.agentTrees(agentId);
  return [
    ...layout.extraAllowedDirs.map((path) => ({ path, writable: true, label: "ALLOWED_DIRS" })),
    { path: trees.workTree, writable: true, label: "working tree" },
    { path: trees.experienceDir, writable: true, label: "experience library" },
    { path: trees.privateDir, writable: true, label: "private area" },
    { path: trees.skillsDir, writable: true, label: "own skills" },
    { path: layout.baseSkillsDir, writable: false, label: "base skills" },
  ];
}

/** The path sandbox of an agent and the OS sandbox request built from its roots. */
export function sandboxRequestFor(config: Config, layout: RuntimeLayout, agent: AgentDefinition, runtimeDir: string): { sandbox: PathSandbox; request: SandboxRequest } {
  const sandbox = new PathSandbox(agentRoots(layout, agent.id));
  return {
    sandbox,
    request: {
      mode: config.TOOLHOST_SANDBOX,
      agentId: agent.id,
      network: agent.network,
      workTree: sandbox.roots.find((root) => root.label === "working tree")?.path ?? layout.agentTrees(agent.id).workTree,
      writable: sandbox.roots.filter((root) => root.writable).map((root) => root.path),
      readOnly: sandbox.roots.filter((root) => !root.writable).map((root) => root.path),
      uidBase: config.TOOLHOST_UID_BASE,
      nprocLimit: config.TOOLHOST_NPROC_LIMIT,
      tmpSizeBytes: config.TOOLHOST_TMP_SIZE_MB * 1024 * 1024,
      runtimeDir,
      isRoot: process.getuid?.() === 0,
    },
  };
}

export function toolLimits(config: Config): ToolLimits {
  return {
    ...DEFAULT_TOOL_LIMITS,
    outputMaxBytes: config.TOOL_OUTPUT_MAX_BYTES,
    shellTimeoutMs: config.SHELL_TIMEOUT_MS,
    shellMaxTimeoutMs: config.SHELL_MAX_TIMEOUT_MS,
  };
}

/** Runs until the connection ends; resolves with the exit code. */
export function runToolhostChild(options: ChildOptions): Promise<number> {
  const { agent, config, layout, logger } = options;
  const trees = layout.agentTrees(agent.id);
  const runtimeDir = mkdtempSync(join(tmpdir(), `laoding-toolhost-${agent.id}-`));
  const { sandbox, request } = sandboxRequestFor(config, layout, agent, runtimeDir);
  const setup = prepareSandbox(request);
  if (setup.warning) logger.warn(setup.warning);
  const shell = createShellRunner(setup.launcher);
  const workTree = sandbox.roots.find((root) => root.label === "working tree")?.path;
  if (!workTree) throw new Error(`the working tree ${trees.workTree} does not exist; run \`laoding init\``);

  const reader = new BoundedMessageReader(options.stdin, config.TOOLHOST_MAX_FRAME_BYTES);
  const writer = new StreamMessageWriter(options.stdout);
  const server = serveToolhost({
    reader,
    writer,
    agentId: agent.id,
    tools: createTools({ allowedCommands: layout.allowedCommands }),
    sandbox,
    workTree,
    limits: toolLimits(config),
    shell,
    ownership: setup.ownership,
    logger,
    ...(agent.experienceLibrary ? { sessionLink: { name: EXPERIENCE_LINK_NAME, target: trees.experienceDir } } : {}),
  });
  logger.info({ sandbox: shell.mode, uid: setup.uid, roots: sandbox.roots.map((root) => root.path) }, "toolhost ready");

  return new Promise((resolve) => {
    let done = false;
    const parentPid = process.ppid;
    const finish = (code: number, why: string) => {
      if (done) return;
      done = true;
      clearInterval(parentWatch);
      shell.killAll();
      server.connection.dispose();
      rmSync(runtimeDir, { recursive: true, force: true });
      logger.info({ why }, "toolhost exiting");
      resolve(code);
    };
    reader.onError((error) => finish(2, `protocol error: ${error.message}`));
    server.connection.onClose(() => {
      // Requests read before the end of input still get their answers (by-hand use),
      // but a parent that died must not keep tools running for long.
      const drain = setTimeout(() => finish(0, "stdin closed"), DRAIN_ON_CLOSE_MS);
      // The protocol layer dispatches queued messages on later turns of the event loop.
      setTimeout(() => {
        void server.idle().then(() => {
          clearTimeout(drain);
          finish(0, "stdin closed");
        });
      }, 20);
    });
    const parentWatch = setInterval(() => {
      if (process.ppid !== parentPid) finish(0, "parent died");
    }, PARENT_CHECK_INTERVAL_MS);
    parentWatch.unref();
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => finish(0, signal));
  });
}
