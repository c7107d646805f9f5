/**
 * Decides, once at start-up, how each agent's toolhost child runs, and proves it works
 * before the bot reports ready (a probe runs the same launch chain with a tiny payload):
 *
 * - as root, the workspace's modes and owners are set first (sandbox/agent-trees.ts), and
 *   every child runs as its agent's uid;
 * - bwrap: the child runs in its jail and every command in a nested sandbox; a probe that
 *   fails stops start-up with the reason and what to change;
 * - auto: bwrap when the probe passes, otherwise none, said as a warning the console shows;
 * - none as root: no sandbox narrowing each command's files, never "no isolation": the
 *   child runs as the agent's uid in its jail (own mount, pid and network namespaces), each
 *   command in user, pid and ipc namespaces of its own with a read-only /proc; where the
 *   jail cannot start, start-up stops and names the fixes (auto too, unless only the
 *   operator at the terminal uses the bot);
 * - none-unsafe as root: the child runs as the agent's uid without a jail (agents kept
 *   apart by uid only), unless that uid cannot reach its trees (a mode-700 parent such as
 *   /root): then in a jail, or, without bubblewrap, start-up names the folder and the fixes;
 * - none or none-unsafe as a non-root user: the documented trust mode.
 * As root, every agent's child and commands also share one memory and pids cgroup.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { execaSync } from "execa";
import type { AgentDefinition } from "../config/agents.js";
import type { Config } from "../config/load-config.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { agentWritableDirs } from "../config/share-layout-check.js";
import {
  CgroupUnavailableError,
  createAgentCgroup,
  findCgroupHierarchies,
  pidIsAlive,
  removeStaleGroups,
  type AgentCgroup,
  type CgroupHierarchies,
} from "../toolhost/sandbox/agent-cgroup.js";
import { agentUid, writeIdentityFiles } from "../toolhost/sandbox/agent-identity.js";
import { secureWorkspace } from "../toolhost/sandbox/agent-trees.js";
import {
  childCodePaths,
  planChildLaunch,
  type ChildLaunch,
  type ChildLaunchOptions,
} from "../toolhost/sandbox/child-launch.js";
import { bwrapCommandArgs, commandNamespacesArgs } from "../toolhost/sandbox/command-launchers.js";
import type { SandboxRoot } from "../toolhost/sandbox/path-sandbox.js";
import type { ToolhostStartup } from "../toolhost/sandbox/startup-message.js";
import type { McpConfigureParams } from "../toolhost/protocol.js";
import { DEFAULT_TOOL_LIMITS } from "../toolhost/tools/define-tool.js";

/** Why an agent's sandbox cannot start (`problem`) and what to do about it (`fix`); the message says both. */
export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
  constructor(
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${problem}. ${fix}`);
  }
}

export type SandboxSetting = Config["TOOLHOST_SANDBOX"];

export type AgentLaunch = {
  agentId: string;
  /** How the agent's shell commands run. */
  mode: "bwrap" | "none";
  /** The setting a re-plan of this agent uses, so a library switch never changes the kind of sandbox. */
  setting: Exclude<SandboxSetting, "auto">;
  jail: boolean;
  uid?: number;
  /** The agent's memory and pids groups (as root, where the kernel offers them). */
  cgroup?: AgentCgroup;
  startup: ToolhostStartup;
  launch: ChildLaunch;
  /** The agent's MCP servers, sent to each new child (`mcp.configure`); their `$NAME`s resolved. */
  mcp?: McpConfigureParams;
};

export type ToolhostLaunches = {
  agents: Map<string, AgentLaunch>;
  /** "none" when any agent runs without the OS sandbox. */
  mode: "bwrap" | "none";
  /** Said on the console as well as in the log (a fallback to none, files left alone). */
  warnings: string[];
};

export type LaunchSetup = {
  config: Config;
  layout: RuntimeLayout;
  agents: AgentDefinition[];
  /** The CLI entry (dist/cli/main.js, or src/cli/main.ts under tsx): the child entry sits beside it. */
  cliEntry: string;
  isRoot?: boolean;
  execPath?: string;
  /** The library switch per agent (agent_settings over agents.json); default agents.json. */
  libraryEnabled?: (agent: AgentDefinition) => boolean;
  /** Children for an operator's maintenance (admin API, `laoding share`): they serve the operator.* tools too. */
  operatorTools?: boolean;
  /**
   * Only the operator at this terminal uses the bot (the console channel, `laoding chat`):
   * then `auto` as root may run without namespaces, with a warning, where they cannot be
   * made; with chat users it stops instead.
   */
  localOperatorOnly?: boolean;
  /** Where the cgroup hierarchies are (tests); default read from /proc/self/mountinfo. */
  cgroups?: CgroupHierarchies | null;
  /**
   * The agents' reach (runtime/agent-reach.ts): the egress proxy's socket of an agent with an
   * allow list, and its MCP servers. Without it, an allow list reaches nothing and no MCP
   * server runs (commands that never chat: `laoding share`).
   */
  reach?: LaunchReach;
};

export type { McpConfigureParams };

export type LaunchReach = {
  egressSocket(agentId: string): string | undefined;
  mcp(agentId: string): McpConfigureParams | undefined;
};

/** Labels of the operator's folders (their modes are the operator's, not the agent's). */
const OPERATOR_ROOT_LABELS = new Set(["ALLOWED_DIRS", "agent writableDirs"]);

/**
 * The folders agent A may touch, most specific last. ALLOWED_DIRS and base skills are
 * read-only for every agent (no folder all agents can write); `writableDirs` are this
 * agent's own extras. Without its library, the library is not bound.
 */
export function agentRoots(
  layout: RuntimeLayout,
  agentId: string,
  libraryEnabled = true,
  writableDirs: string[] = [],
): SandboxRoot[] {
  const trees = layout.agentTrees(agentId);
  return [
    ...layout.extraAllowedDirs.map((path) => ({ path, writable: false, label: "ALLOWED_DIRS" })),
    ...writableDirs.map((path) => ({ path, writable: true, label: "agent writableDirs" })),
    { path: trees.workTree, writable: true, label: "working tree" },
    ...(libraryEnabled ? [{ path: trees.experienceDir, writable: true, label: "experience library" }] : []),
    { path: trees.privateDir, writable: true, label: "private area" },
    { path: trees.skillsDir, writable: true, label: "own skills" },
    { path: layout.baseSkillsDir, writable: false, label: "base skills" },
  ];
}

/** `libraryEnabled`: the agent's run-time switch (agent_settings), default its agents.json value. */
export function toolhostStartupFor(
  config: Config,
  layout: RuntimeLayout,
  agent: AgentDefinition,
  commandSandbox: "bwrap" | "none",
  libraryEnabled = agent.experienceLibrary,
  egressSocket?: string,
): ToolhostStartup {
  const trees = layout.agentTrees(agent.id);
  return {
    version: 1,
    agentId: agent.id,
    roots: agentRoots(layout, agent.id, libraryEnabled, agentWritableDirs(layout, agent)),
    workTree: trees.workTree,
    ...libraryStartup(config, layout.libraryLinkName, trees.experienceDir, libraryEnabled),
    allowedCommands: layout.allowedCommands,
    limits: {
      ...DEFAULT_TOOL_LIMITS,
      outputMaxBytes: config.TOOL_OUTPUT_MAX_BYTES,
      shellTimeoutMs: config.SHELL_TIMEOUT_MS,
      shellMaxTimeoutMs: config.SHELL_MAX_TIMEOUT_MS,
    },
    commandSandbox,
    bwrapPath: config.TOOLHOST_BWRAP_PATH,
    network: agent.network === true,
    ...(egressSocket !== undefined && typeof agent.network === "object"
      ? { egress: { socketPath: egressSocket } }
      : {}),
    tmpSizeBytes: config.TOOLHOST_TMP_SIZE_MB * 1024 * 1024,
    memoryLimitBytes: config.TOOLHOST_MEMORY_LIMIT_MB * 1024 * 1024,
    tasksPerCall: tasksPerCall(config.TOOLHOST_NPROC_LIMIT, config.TOOLHOST_CONCURRENCY),
    maxFrameBytes: config.TOOLHOST_MAX_FRAME_BYTES,
    logLevel: config.LOG_LEVEL,
  };
}

/**
 * One call's share of the agent's process limit: the limit over the calls that may run at
 * once, one share kept for the child itself (its own threads count too). Never under 8,
 * so a small limit still lets a pipeline run.
 */
export function tasksPerCall(nprocLimit: number, concurrency: number): number {
  return Math.max(8, Math.floor(nprocLimit / (concurrency + 1)));
}

/** The library part of the start-up message: bound, linked and served, or only the link's removal. */
function libraryStartup(
  config: Config,
  linkName: string,
  experienceDir: string,
  enabled: boolean,
): Pick<ToolhostStartup, "sessionLink" | "library"> {
  if (!enabled) return { sessionLink: { name: linkName } };
  return {
    sessionLink: { name: linkName, target: experienceDir },
    library: { dir: experienceDir, locale: config.BOT_LOCALE },
  };
}

/**
 * Every agent holds a child, so its memory is paid per agent. A tool call's garbage dies
 * young: a young generation of 2 x 1 MiB (V8's default grows to 2 x 16 MiB) collects it
 * as well, and V8's size-first tuning costs no measurable speed here; together about
 * 30 MiB less resident memory per child after a burst of calls (bench/README.md). The
 * child collects once when it goes quiet after a burst (`gc`, child-main.ts); with the
 * collector on the main thread, the pages it frees go back to the system at once (with
 * helper threads they stayed with the process: 64 MiB after a burst instead of 59), and
 * on a heap this small the helpers bought no measurable speed.
 */
const CHILD_V8_FLAGS = ["--max-semi-space-size=1", "--optimize-for-size", "--single-threaded-gc", "--expose-gc"];

/** The child entry that sits beside the CLI entry (same build, same extension). */
export function childEntryFor(cliEntry: string): string {
  const extension = cliEntry.endsWith(".ts") ? ".ts" : ".js";
  return join(dirname(dirname(cliEntry)), "toolhost", "server", `child-entry${extension}`);
}

/** The package root above an entry file (the folder holding package.json). */
function packageRootOf(entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, "package.json"))) return dir;
  return dirname(dirname(dirname(entry)));
}

/** A path inside /tmp (by segments): a command's and a server's /tmp is a fresh one. */
const underTmp = (path: string): boolean => path === "/tmp" || path.startsWith("/tmp/");

export function prepareToolhostLaunches(setup: LaunchSetup): ToolhostLaunches {
  const { config, layout } = setup;
  const isRoot = setup.isRoot ?? process.getuid?.() === 0;
  const execPath = setup.execPath ?? process.execPath;
  const entry = childEntryFor(setup.cliEntry);
  const packageRoot = packageRootOf(entry);
  // Under tests and `npm run dev` the entry is TypeScript: load tsx by absolute path so the
  // child does not depend on its cwd to find it.
  const nodeArgs = [
    ...CHILD_V8_FLAGS,
    ...(entry.endsWith(".ts") ? ["--import", import.meta.resolve("tsx"), entry] : [entry]),
  ];
  const codePaths = childCodePaths(packageRoot, entry, execPath);
  const warnings: string[] = [];
  const uids = new Map(setup.agents.map((agent) => [agent.id, agentUid(agent.id, config.TOOLHOST_UID_BASE)]));
  if (isRoot) {
    const report = secureWorkspace(
      { ...layout, privateDirs: [layout.dataDir, layout.configsDir, layout.botContextDir] },
      setup.agents.map((agent) => {
        const trees = layout.agentTrees(agent.id);
        return {
          agentId: agent.id,
          uid: uids.get(agent.id) as number,
          trees: [trees.workTree, trees.experienceDir, trees.privateDir, trees.skillsDir],
        };
      }),
    );
    warnings.push(...report.warnings);
  }
  const groupFor = isRoot ? agentCgroups(setup, warnings) : () => undefined;

  const agents = new Map<string, AgentLaunch>();
  for (const agent of setup.agents) {
    const uid = isRoot ? (uids.get(agent.id) as number) : undefined;
    const runAs =
      uid === undefined
        ? undefined
        : {
            uid,
            gid: uid,
            nprocLimit: config.TOOLHOST_NPROC_LIMIT,
            identityFiles: writeIdentityFiles(
              join(layout.dataDir, "sandbox", agent.id),
              agent.id,
              uid,
              layout.agentTrees(agent.id).workTree,
            ),
          };
    const cgroup = groupFor(agent.id);
    const mcp = setup.reach?.mcp(agent.id);
    const plan = (
      mode: "bwrap" | "none",
      jail: boolean,
      setting: AgentLaunch["setting"],
      commandNamespaces = jail && mode === "none",
    ): AgentLaunch => {
      const planned = toolhostStartupFor(
        config,
        layout,
        agent,
        mode,
        setup.libraryEnabled?.(agent) ?? agent.experienceLibrary,
        setup.reach?.egressSocket(agent.id),
      );
      const startup = {
        ...planned,
        ...(runAs ? { ownUid: true } : {}),
        ...(commandNamespaces ? { commandNamespaces } : {}),
        ...(setup.operatorTools ? { operatorTools: true } : {}),
        // Those under /tmp are bound again over the fresh /tmp of each command and server.
        ...(codePaths.some(underTmp) ? { codePaths: codePaths.filter(underTmp) } : {}),
      };
      const options: ChildLaunchOptions = {
        startup,
        node: { execPath, args: nodeArgs },
        codePaths,
        jail,
        ...(runAs ? { runAs } : {}),
        ...(cgroup ? { cgroup } : {}),
      };
      return {
        agentId: agent.id,
        mode,
        setting,
        jail,
        ...(uid !== undefined ? { uid } : {}),
        ...(cgroup ? { cgroup } : {}),
        startup,
        launch: planChildLaunch(options),
        ...(mcp ? { mcp } : {}),
      };
    };
    agents.set(
      agent.id,
      chooseLaunch(
        {
          agentId: agent.id,
          requested: config.TOOLHOST_SANDBOX,
          isRoot,
          localOperatorOnly: setup.localOperatorOnly === true,
        },
        plan,
        warnings,
        execPath,
      ),
    );
  }
  const mode = [...agents.values()].some((launch) => launch.mode === "none") ? "none" : "bwrap";
  return { agents, mode, warnings };
}

type LaunchChoice = { agentId: string; requested: SandboxSetting; isRoot: boolean; localOperatorOnly: boolean };

type PlanLaunch = (
  mode: "bwrap" | "none",
  jail: boolean,
  setting: AgentLaunch["setting"],
  commandNamespaces?: boolean,
) => AgentLaunch;

function chooseLaunch(choice: LaunchChoice, plan: PlanLaunch, warnings: string[], execPath: string): AgentLaunch {
  const { agentId, requested, isRoot } = choice;
  let bwrapProblem: string | undefined;
  if (requested === "auto" || requested === "bwrap") {
    const sandboxed = plan("bwrap", true, "bwrap");
    const problem = probe(sandboxed, execPath);
    if (problem === undefined) return sandboxed;
    // The uid cannot enter its own folders: no mode would fix that, and none must not hide it.
    if (problem.kind === "folders") throw foldersProblem(sandboxed, problem.text);
    if (requested === "bwrap") {
      throw new SandboxUnavailableError(
        `TOOLHOST_SANDBOX=bwrap but agent ${sandboxed.agentId}'s sandbox cannot start: ${problem.text}`,
        "Install bubblewrap (apt-get install bubblewrap) and make sure user namespaces are allowed (sysctl kernel.unprivileged_userns_clone=1), or set TOOLHOST_SANDBOX=none to run without the OS sandbox",
      );
    }
    bwrapProblem = problem.text;
  }
  if (!isRoot) {
    if (bwrapProblem !== undefined)
      warnings.push(
        `agent ${agentId}: bubblewrap is not usable (${bwrapProblem}); shell commands run WITHOUT the OS sandbox (trust mode: every chat user is trusted)`,
      );
    return plan("none", false, "none");
  }
  if (requested !== "none-unsafe") {
    // As root, "none" means no bubblewrap per command, never no isolation: the child's jail.
    let jailed = plan("none", true, "none");
    let problem = probe(jailed, execPath);
    if (problem?.kind === "namespaces") {
      // Unprivileged user namespaces are off: commands share the jail's namespaces, and what
      // they leave behind is found by the agent's uid instead (docs/isolation.md says what else).
      warnings.push(
        `agent ${agentId}: shell commands cannot get namespaces of their own (${problem.text}); they share the toolhost's jail, and what a command leaves behind is killed by the agent's uid when the call ends`,
      );
      jailed = plan("none", true, "none", false);
      problem = probe(jailed, execPath);
    }
    if (problem === undefined) {
      if (bwrapProblem !== undefined)
        warnings.push(
          `agent ${agentId}: the per-command sandbox is not usable (${bwrapProblem}); shell commands run without it, inside the agent's own namespaces`,
        );
      return jailed;
    }
    if (problem.kind === "folders") throw foldersProblem(jailed, problem.text);
    if (!(requested === "auto" && choice.localOperatorOnly)) {
      throw new SandboxUnavailableError(
        `agent ${agentId}'s toolhost cannot get its own mount, pid and network namespaces (${problem.text}), and as root TOOLHOST_SANDBOX=${requested} never runs an agent without them`,
        "Install bubblewrap (apt-get install bubblewrap), or set TOOLHOST_SANDBOX=none-unsafe to keep agents apart by their uids only (they then share the host's /tmp, /proc and network: docs/isolation.md)",
      );
    }
    warnings.push(
      `agent ${agentId}: bubblewrap is not usable (${problem.text}); only the operator at this terminal uses the bot, so the agent runs apart by its uid only (sharing the host's /tmp, /proc and network). Install bubblewrap (apt-get install bubblewrap) before adding chat channels: with them this stops start-up`,
    );
  } else {
    warnings.push(
      `TOOLHOST_SANDBOX=none-unsafe: agents are kept apart by their uids only; they share the host's /tmp, /proc and network (docs/isolation.md)`,
    );
  }
  const direct = plan("none", false, "none-unsafe");
  const unreachable = probe(direct, execPath);
  if (unreachable === undefined) return direct;
  const jailed = plan("none", true, "none-unsafe");
  const jailProblem = probe(jailed, execPath);
  if (jailProblem === undefined) return jailed;
  // In the jail every ancestor is passable: a uid that still cannot enter is the folder's own mode or owner.
  if (jailProblem.kind === "folders") throw foldersProblem(jailed, jailProblem.text);
  const closed = closedAncestor(direct.startup.workTree);
  throw new SandboxUnavailableError(
    `agent ${direct.agentId}'s uid ${direct.uid} cannot reach its folders (${unreachable.text}) and bubblewrap, which would bind them, cannot run (${jailProblem.text})`,
    `Install bubblewrap (apt-get install bubblewrap), move the workspace out of a private folder (AGENT_WORKSPACE_DIR=/srv/laoding)${closed ? `, or let the agents pass through ${closed} (chmod o+x ${closed})` : ""}`,
  );
}

/**
 * The agents' memory and pids groups, made once per planning. Where the kernel has none
 * to offer (or refuses), the launch goes on without and says so once: the per-command
 * limits and the sized tmpfs still hold (docs/isolation.md).
 */
function agentCgroups(setup: LaunchSetup, warnings: string[]): (agentId: string) => AgentCgroup | undefined {
  const hierarchies =
    setup.cgroups === undefined
      ? findCgroupHierarchies(readFileSync("/proc/self/mountinfo", "utf8"))
      : (setup.cgroups ?? undefined);
  if (!hierarchies) {
    warnings.push(
      "no memory and pids cgroups are available (neither cgroup v2 with both controllers nor the v1 memory and pids hierarchies is mounted): each agent's memory is bounded per command only (TOOLHOST_MEMORY_LIMIT_MB), not as a whole",
    );
    return () => undefined;
  }
  removeStaleGroups(hierarchies, pidIsAlive, process.pid);
  const limits = {
    memoryBytes: setup.config.TOOLHOST_AGENT_MEMORY_MB * 1024 * 1024,
    maxProcesses: setup.config.TOOLHOST_NPROC_LIMIT,
  };
  let reported = false;
  return (agentId) => {
    try {
      return createAgentCgroup(hierarchies, process.pid, agentId, limits);
    } catch (error) {
      if (!(error instanceof CgroupUnavailableError)) throw error;
      if (!reported)
        warnings.push(
          `${error.message}; each agent's memory is bounded per command only (TOOLHOST_MEMORY_LIMIT_MB), not as a whole`,
        );
      reported = true;
      return undefined;
    }
  };
}

function foldersProblem(launch: AgentLaunch, problem: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    `agent ${launch.agentId}'s toolhost cannot start: ${problem}`,
    `The bot gives each agent's folders to its uid when it starts as root; check that nothing else changes their owner or mode (ls -ld the folder), or give them back with chown -R ${launch.uid ?? "<uid>"}:${launch.uid ?? "<uid>"} <folder>`,
  );
}

/** The probe's exit code when the uid cannot enter or write one of its own folders. */
const FOLDERS_EXIT = 3;
/** The probe's exit code when a none-mode command could not get its own namespaces. */
const NAMESPACES_EXIT = 5;
/** How long a probe may run before it is killed and its launch counted as broken. */
const PROBE_TIMEOUT_MS = 15_000;

type ProbeProblem = { kind: "folders" | "sandbox" | "namespaces"; text: string };

/**
 * Runs the agent's launch chain with a shell script instead of Node: it checks that the
 * agent's uid can enter every writable root and, for the bwrap mode, that the nested
 * command sandbox starts. Returns the problem, or undefined when it works.
 */
function probe(launch: AgentLaunch, execPath: string): ProbeProblem | undefined {
  const { startup } = launch;
  if (launch.jail && !existsSync(startup.bwrapPath))
    return { kind: "sandbox", text: `${startup.bwrapPath} is not installed` };
  const writable = startup.roots.filter((root) => root.writable && existsSync(root.path)).map((root) => root.path);
  const readOnly = startup.roots.filter((root) => !root.writable && existsSync(root.path)).map((root) => root.path);
  // ALLOWED_DIRS extras are the operator's folders, with the operator's modes.
  const own = startup.roots
    .filter((root) => root.writable && !OPERATOR_ROOT_LABELS.has(root.label) && existsSync(root.path))
    .map((root) => root.path);
  const checks = own.map(
    (dir) =>
      `[ -x ${quote(dir)} ] && [ -w ${quote(dir)} ] || { echo "uid $(id -u) cannot enter or write ${dir.replaceAll('"', "")}" >&2; exit ${FOLDERS_EXIT}; }`,
  );
  if (launch.mode === "bwrap") {
    const nested = bwrapCommandArgs(
      {
        agentId: startup.agentId,
        home: startup.workTree,
        memoryLimitBytes: startup.memoryLimitBytes,
        writable,
        readOnly,
        network: startup.network,
        tmpSizeBytes: startup.tmpSizeBytes,
        bwrapPath: startup.bwrapPath,
      },
      startup.workTree,
      "probe",
    );
    checks.push(
      `${quote(startup.bwrapPath)} ${nested.map(quote).join(" ")} -- /bin/true || { echo "the per-command sandbox cannot start" >&2; exit 4; }`,
    );
  }
  if (startup.commandNamespaces)
    checks.push(
      `${commandNamespacesArgs(startup.bwrapPath).map(quote).join(" ")} /bin/true || { echo "an unprivileged bubblewrap cannot make a command's namespaces" >&2; exit ${NAMESPACES_EXIT}; }`,
    );
  const script = checks.join("\n");
  // The same chain as the real child, with the Node program swapped for the script.
  const nodeIndex = launch.launch.args.lastIndexOf(execPath);
  const args =
    nodeIndex === -1 ? launch.launch.args : [...launch.launch.args.slice(0, nodeIndex), "/bin/sh", "-c", script];
  // execa runs the probe: the chain's own environment only, a deadline, stderr as lines.
  const result = execaSync(launch.launch.file, args, {
    env: launch.launch.env,
    extendEnv: false,
    timeout: PROBE_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
    lines: true,
    reject: false,
  });
  // Could not run, or ran past its deadline: spawnSync's own error (ENOENT, ETIMEDOUT...), kept by execa as the cause.
  if (result.cause !== undefined)
    return {
      kind: "sandbox",
      text: result.code === "ENOENT" ? `${launch.launch.file} is not installed` : (result.cause as Error).message,
    };
  if (!result.failed) return undefined;
  // The chain's last word on stderr says why (each check prints its reason last).
  const text =
    result.stderr
      .map((line) => line.trim())
      .filter((line) => line.length > 0)
      .pop() ?? `exit code ${result.exitCode ?? null}`;
  return {
    kind: result.exitCode === FOLDERS_EXIT ? "folders" : result.exitCode === NAMESPACES_EXIT ? "namespaces" : "sandbox",
    text,
  };
}

/** The first folder above `path` that others may not pass through (mode without o+x). */
function closedAncestor(path: string): string | undefined {
  const parts = path.split("/").filter((part) => part.length > 0);
  for (let index = 1; index < parts.length; index += 1) {
    const dir = `/${parts.slice(0, index).join("/")}`;
    try {
      if ((statSync(dir).mode & 0o001) === 0) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function quote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * Starts an agent's child: own process group (stopping it takes its commands along), stdout for the protocol.
 * Node's spawn, not execa: the child lives as long as the agent's sessions and its pipes carry the
 * protocol, supervised by the client; execa's promise waits for those pipes and its kill reaches the pid only.
 */
export function spawnToolhostChild(
  launch: AgentLaunch,
  stdio: StdioOptions = ["pipe", "pipe", "inherit"],
): ChildProcess {
  return spawn(launch.launch.file, launch.launch.args, { env: launch.launch.env, detached: true, shell: false, stdio });
}
