/**
 * How the toolhost child starts one shell command. The child already runs with its
 * agent's authority (the agent's uid, inside its jail when there is one), so these only
 * narrow it further for one command:
 *
 * none: `bash -c` in the working folder with a minimal environment; inside the jail, in
 * pid, ipc and user namespaces of its own with a read-only /proc (below).
 *
 * bwrap: a fresh unprivileged bubblewrap per command (new user, pid, ipc, uts, cgroup
 * and, unless the agent has network, net namespaces; no capabilities; the jail's root
 * read-only with only the agent's writable trees bound writable at the same paths; a
 * private size-limited /tmp). Killing bwrap takes the whole pid namespace with it; bwrap
 * reports the namespace's init pid on fd 3 so the runner can wait for the teardown.
 * The jail's /proc is bound read-only: a user namespace may not mount a new proc over a
 * proc that has parts hidden, and the jail only shows this agent's own processes.
 *
 * Both: the command is the first the out-of-memory killer takes, RLIMIT_DATA bounds its
 * memory, and every descriptor above 2 is closed before bash starts.
 */
import { callProxyUrl, proxyEnvironment } from "../net/proxy-environment.js";
import { withInheritedFdsClosed } from "./fd-closer.js";
import { isWithin } from "./path-sandbox.js";
import { CALL_TAG_VARIABLE, OWNER_TAG_VARIABLE } from "../process-tags.js";
import type { Launcher } from "../shell/shell-runner.js";

export const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export type CommandSandboxOptions = {
  agentId: string;
  /** Home folder of the command (the agent's working tree). */
  home: string;
  /** RLIMIT_DATA of the command, in bytes. */
  memoryLimitBytes: number;
  /** The egress forwarder's URL when the agent has an allow list: commands and servers get HTTP_PROXY and kin. */
  proxyUrl?: string;
};

/**
 * How the child starts one of the agent's MCP stdio servers: the same sandbox as a
 * command (namespaces, memory bound, no inherited descriptors), but long-lived, with the
 * server's own variables. Those travel in the spawned process's environment, never in
 * argv, so no process listing shows them.
 */
export type ServerLaunch = { command: string; args: string[]; env: Record<string, string> };

/** `cwd` undefined: the server works in its private home. */
export type ServerLauncher = (server: { argv: string[]; env: Record<string, string>; cwd?: string }) => ServerLaunch;

/**
 * A server's HOME (and folder, unless it is given one), in a /tmp of its own: nothing the
 * agent writes may steer a server that holds a secret. A home in the agent's tree would
 * let the agent plant `~/.npmrc` with `node-options=--require=…`, a Python user site, a
 * poisoned npx or uv cache, and run its code inside the server, next to the token.
 */
export const SERVER_HOME = "/tmp/mcp-home";

/** What a server's sandbox adds to a command's: its private home, and the folder it starts in. */
function serverHome(cwd: string | undefined): string[] {
  return ["--perms", "0700", "--dir", SERVER_HOME, "--chdir", cwd ?? SERVER_HOME];
}

/** The call tag of the agent's MCP servers: theirs is no call's. */
const SERVER_MARKER = "mcp-server";

function baseEnv(options: CommandSandboxOptions, marker: string): Record<string, string> {
  return {
    PATH: TOOL_PATH,
    HOME: options.home,
    LANG: "C.UTF-8",
    TERM: "dumb",
    TMPDIR: "/tmp",
    USER: `agent-${options.agentId}`,
    // A command's proxy URL names its call, so the refusals it meets are told apart from others' (net/proxy-forwarder.ts).
    ...(options.proxyUrl
      ? proxyEnvironment(marker === SERVER_MARKER ? options.proxyUrl : callProxyUrl(options.proxyUrl, marker))
      : {}),
    [CALL_TAG_VARIABLE]: marker,
  };
}

/**
 * The prefix every command shares: first in line for the kernel's out-of-memory killer
 * (the agent's child and its commands share one memory group, and when the group is full
 * the command that filled it should go, not the toolhost serving the agent's other
 * users), the memory bound, then bash without inherited descriptors.
 */
function limited(options: CommandSandboxOptions, argv: string[]): string[] {
  return [
    "/usr/bin/choom",
    "-n",
    "1000",
    "--",
    "/usr/bin/prlimit",
    `--data=${options.memoryLimitBytes}`,
    "--",
    ...argv,
  ];
}

function bashArgv(command: string): string[] {
  return withInheritedFdsClosed(["/bin/bash", "--noprofile", "--norc", "-c", command]);
}

/**
 * None mode inside the jail: no bubblewrap sandbox of its own around the command's files
 * (it sees the jail as the child does: the jail's root, the agent's trees, the jail's
 * /tmp and /dev), but namespaces of its own, made by an unprivileged bubblewrap:
 * - a pid namespace: when the command's shell ends, the kernel kills everything left in
 *   it (`setsid`, double forks, cleared environments), and nothing in it can name a
 *   process outside it (the toolhost child among them) to signal it;
 * - an ipc namespace: SysV shared memory dies with the command instead of holding the
 *   agent's memory for later calls;
 * - a read-only /proc: a command can neither lower its own out-of-memory score (set just
 *   before, by choom) nor raise the child's, so the kernel takes the command, not the
 *   toolhost, when the agent's memory group is full;
 * - no new user namespaces inside.
 */
export function commandNamespacesArgs(bwrapPath: string, reportInit = false): string[] {
  // bwrap reports the namespace's init pid on fd 3, so the runner can wait for the teardown.
  return [
    bwrapPath,
    ...(reportInit ? ["--json-status-fd", "3"] : []),
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--dev-bind",
    "/",
    "/",
    "--ro-bind",
    "/proc",
    "/proc",
    "--",
  ];
}

/**
 * `ownerPid`: the toolhost's pid, so its parent can find the commands it left behind if it dies.
 * `namespaces`: each command in namespaces of its own (the child runs in a jail; the bubblewrap program).
 */
export function noneLauncher(
  options: CommandSandboxOptions & { ownerPid: number; namespaces?: { bwrapPath: string } },
): Launcher {
  return {
    mode: "none",
    launch(command, _cwd, marker) {
      const wrap = options.namespaces ? commandNamespacesArgs(options.namespaces.bwrapPath, true) : [];
      const argv = limited(options, [...wrap, ...bashArgv(command)]);
      return {
        file: argv[0] as string,
        args: argv.slice(1),
        env: { ...baseEnv(options, marker), [OWNER_TAG_VARIABLE]: String(options.ownerPid) },
        ...(options.namespaces ? { statusFd: 3 as const } : {}),
      };
    },
  };
}

/** None mode: the server in namespaces of its own when the child's commands get them. */
/**
 * None mode: with namespaces for commands, the server gets them too, plus a /tmp of its
 * own holding its home (the agent's trees under /tmp bound again, as in bwrap mode).
 * Without them the server shares the agent's uid, /tmp and /proc with its commands, and
 * nothing keeps its secrets from the agent (docs/mcp.md).
 */
export function noneServerLauncher(
  options: CommandSandboxOptions & {
    ownerPid: number;
    namespaces?: { bwrapPath: string };
    writable: string[];
    readOnly: string[];
  },
): ServerLauncher {
  return (server) => {
    const underTmp = (path: string) => isWithin("/tmp", path);
    const wrap = options.namespaces
      ? [
          ...commandNamespacesArgs(options.namespaces.bwrapPath).slice(0, -1),
          "--tmpfs",
          "/tmp",
          ...outermostPaths(options.writable.filter(underTmp)).flatMap((dir) => ["--bind", dir, dir]),
          ...options.readOnly.filter(underTmp).flatMap((dir) => ["--ro-bind", dir, dir]),
          ...serverHome(server.cwd),
          "--",
        ]
      : [];
    const argv = limited(options, [...wrap, ...withInheritedFdsClosed(server.argv)]);
    const home = options.namespaces ? SERVER_HOME : options.home;
    return {
      command: argv[0] as string,
      args: argv.slice(1),
      env: {
        ...baseEnv(options, SERVER_MARKER),
        HOME: home,
        [OWNER_TAG_VARIABLE]: String(options.ownerPid),
        ...server.env,
      },
    };
  };
}

export type BwrapCommandOptions = CommandSandboxOptions & {
  bwrapPath: string;
  /** The agent's writable trees, bound writable at their real paths. */
  writable: string[];
  /** Read-only trees (base skills), bound again so a tree under /tmp survives the fresh /tmp. */
  readOnly: string[];
  network: boolean;
  tmpSizeBytes: number;
};

/**
 * Size of the /dev/shm each sandbox gets. bwrap's `--dev` is a tmpfs without a size, and
 * its shm folder is writable by all: a sized tmpfs goes over it and the rest of /dev is
 * made read-only, so no sandbox can hold more than this there.
 */
export const SHM_SIZE_BYTES = 64 * 1024 * 1024;

/** A fresh /dev whose only writable part is a sized /dev/shm. */
export function sizedDev(): string[] {
  return [
    "--dev",
    "/dev",
    "--size",
    String(SHM_SIZE_BYTES),
    "--perms",
    "1777",
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
  ];
}

/** The namespaces the jail and every command share: own pids, ipc, hostname, cgroup, and no network unless allowed; no capabilities. */
export function agentNamespaces(agentId: string, network: boolean): string[] {
  return [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(network ? [] : ["--unshare-net"]),
    "--hostname",
    `laoding-${agentId}`.slice(0, 63),
    "--cap-drop",
    "ALL",
  ];
}

/**
 * The paths not inside another of them (by segments). A tree inside another bound tree
 * (own skills in the private area) is visible through the outer bind already, and binding
 * it again would make bwrap follow whatever the agent left at that name: a link there
 * would put a host folder into the sandbox.
 */
export function outermostPaths(paths: string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((path) => !unique.some((other) => other !== path && isWithin(other, path)));
}

/** `marker` undefined: the environment bwrap was started with passes through (a server's, set by the spawner). */
export function bwrapCommandArgs(options: BwrapCommandOptions, cwd: string, marker: string | undefined): string[] {
  const env =
    marker === undefined
      ? []
      : [
          "--clearenv",
          ...Object.entries(baseEnv(options, marker)).flatMap(([name, value]) => ["--setenv", name, value]),
        ];
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--disable-userns",
    ...agentNamespaces(options.agentId, options.network),
    ...env,
    // The jail's root is all this agent may see; everything read-only first.
    "--ro-bind",
    "/",
    "/",
    ...sizedDev(),
    "--ro-bind",
    "/proc",
    "/proc",
    "--size",
    String(options.tmpSizeBytes),
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
  ];
  // Later mounts win: the writable trees after the read-only root and the fresh /tmp.
  for (const dir of outermostPaths(options.writable)) args.push("--bind", dir, dir);
  for (const dir of options.readOnly) args.push("--ro-bind", dir, dir);
  args.push("--chdir", cwd);
  return args;
}

export function bwrapLauncher(options: BwrapCommandOptions): Launcher {
  return {
    mode: "bwrap",
    launch(command, cwd, marker) {
      const argv = limited(options, [
        options.bwrapPath,
        "--json-status-fd",
        "3",
        ...bwrapCommandArgs(options, cwd, marker),
        "--",
        ...bashArgv(command),
      ]);
      return { file: argv[0] as string, args: argv.slice(1), env: { PATH: TOOL_PATH, LANG: "C.UTF-8" }, statusFd: 3 };
    },
  };
}

/** Bwrap mode: the server in a fresh sandbox of its own, like a command's, for as long as it runs. */
export function bwrapServerLauncher(options: BwrapCommandOptions): ServerLauncher {
  return (server) => {
    const sandbox = bwrapCommandArgs(options, SERVER_HOME, undefined);
    // The command's own --chdir (last) gives way to the server's home and folder.
    const argv = limited(options, [
      options.bwrapPath,
      ...sandbox.slice(0, -2),
      ...serverHome(server.cwd),
      "--",
      ...withInheritedFdsClosed(server.argv),
    ]);
    return {
      command: argv[0] as string,
      args: argv.slice(1),
      env: { ...baseEnv(options, SERVER_MARKER), HOME: SERVER_HOME, ...server.env },
    };
  };
}
