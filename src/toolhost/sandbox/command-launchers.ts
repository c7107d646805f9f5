/**
 * How the toolhost child starts one shell command. The child already runs with its
 * agent's authority (the agent's uid, inside its jail when there is one), so these only
 * narrow it further for one command:
 *
 * none: `bash -c` in the working folder with a minimal environment; inside the jail, in a
 * pid namespace of its own.
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
};

/**
 * The prefix every command shares: first in line for the kernel's out-of-memory killer
 * (the agent's child and its commands share one memory group, and when the group is full
 * the command that filled it should go, not the toolhost serving the agent's other
 * users), the memory bound, then bash without inherited descriptors.
 */
function limited(options: CommandSandboxOptions, argv: string[]): string[] {
  return ["/usr/bin/choom", "-n", "1000", "--", "/usr/bin/prlimit", `--data=${options.memoryLimitBytes}`, "--", ...argv];
}

function bashArgv(command: string): string[] {
  return withInheritedFdsClosed(["/bin/bash", "--noprofile", "--norc", "-c", command]);
}

/**
 * A pid namespace of the command's own, made with a user namespace (no privilege needed):
 * when its first process (bash) ends, the kernel kills everything left in it, `setsid`
 * and double-forked children included, and nothing in it can name a process outside it
 * (the toolhost child among them) to signal it. `--kill-child` takes the namespace down
 * when the runner kills unshare itself. Used in none mode inside the jail, where the
 * command has no bubblewrap of its own.
 */
export const OWN_PID_NAMESPACE = ["/usr/bin/unshare", "--user", "--map-current-user", "--pid", "--fork", "--kill-child", "--"];

/**
 * `ownerPid`: the toolhost's pid, so its parent can find the commands it left behind if it dies.
 * `pidNamespace`: each command in a pid namespace of its own (the child runs in a jail).
 */
export function noneLauncher(options: CommandSandboxOptions & { ownerPid: number; pidNamespace?: boolean }): Launcher {
  return {
    mode: "none",
    launch(command, _cwd, marker) {
      const argv = limited(options, [...(options.pidNamespace === true ? OWN_PID_NAMESPACE : []), ...bashArgv(command)]);
      return {
        file: argv[0] as string,
        args: argv.slice(1),
        env: { PATH: TOOL_PATH, HOME: options.home, LANG: "C.UTF-8", TERM: "dumb", USER: `agent-${options.agentId}`, [CALL_TAG_VARIABLE]: marker, [OWNER_TAG_VARIABLE]: String(options.ownerPid) },
      };
    },
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
  return ["--dev", "/dev", "--size", String(SHM_SIZE_BYTES), "--perms", "1777", "--tmpfs", "/dev/shm", "--remount-ro", "/dev"];
}

/** The namespaces the jail and every command share: own pids, ipc, hostname, cgroup, and no network unless allowed; no capabilities. */
export function agentNamespaces(agentId: string, network: boolean): string[] {
  return [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(network ? [] : ["--unshare-net"]),
    "--hostname", `laoding-${agentId}`.slice(0, 63),
    "--cap-drop", "ALL",
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

export function bwrapCommandArgs(options: BwrapCommandOptions, cwd: string, marker: string): string[] {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--disable-userns",
    ...agentNamespaces(options.agentId, options.network),
    "--clearenv",
    "--setenv", "PATH", TOOL_PATH,
    "--setenv", "HOME", options.home,
    "--setenv", "LANG", "C.UTF-8",
    "--setenv", "TERM", "dumb",
    "--setenv", "TMPDIR", "/tmp",
    "--setenv", "USER", `agent-${options.agentId}`,
    "--setenv", CALL_TAG_VARIABLE, marker,
    // The jail's root is all this agent may see; everything read-only first.
    "--ro-bind", "/", "/",
    ...sizedDev(),
    "--ro-bind", "/proc", "/proc",
    "--size", String(options.tmpSizeBytes), "--perms", "1777", "--tmpfs", "/tmp",
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
      const argv = limited(options, [options.bwrapPath, "--json-status-fd", "3", ...bwrapCommandArgs(options, cwd, marker), "--", ...bashArgv(command)]);
      return { file: argv[0] as string, args: argv.slice(1), env: { PATH: TOOL_PATH, LANG: "C.UTF-8" }, statusFd: 3 };
    },
  };
}
