/**
 * How a command line is started, per sandbox mode.
 *
 * none: `bash -c` in the working folder with a minimal environment (no secrets). A
 * trust mode: the path sandbox guards the file tools, the allowlist guards the shell.
 *
 * bwrap: a fresh bubblewrap per command (about 9 ms), following SANDBOX.md: when the
 * bot is root, first drop to the agent's own uid (setpriv, no capabilities, process
 * limit by prlimit), then bwrap with new user/pid/ipc/uts/cgroup (and net) namespaces,
 * read-only system folders, a private size-limited /tmp, only the agent's trees bound
 * writable at their real paths (so links resolve identically), a cleared environment,
 * and `--remount-ro /`. SIGKILL of bwrap takes the whole pid namespace with it; bwrap
 * reports the namespace's init pid on fd 3 so the runner can wait for the teardown.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import type { Launcher } from "./shell-runner.js";
import { CALL_TAG_VARIABLE, OWNER_TAG_VARIABLE } from "../process-tags.js";

export const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** `ownerPid`: the toolhost's pid, so its parent can find the commands it left behind if it dies. */
export function noneLauncher(options: { home: string; ownerPid: number }): Launcher {
  return {
    mode: "none",
    launch(command, _cwd, marker) {
      return {
        file: "/bin/bash",
        args: ["--noprofile", "--norc", "-c", command],
        env: { PATH: TOOL_PATH, HOME: options.home, LANG: "C.UTF-8", TERM: "dumb", [CALL_TAG_VARIABLE]: marker, [OWNER_TAG_VARIABLE]: String(options.ownerPid) },
      };
    },
  };
}

export type BwrapOptions = {
  /** Writable trees of the agent, bound at their real paths. */
  writable: string[];
  /** Read-only trees (base skills, read-only extras). */
  readOnly: string[];
  /** Home folder inside the sandbox (the agent's working tree). */
  home: string;
  network: boolean;
  tmpSizeBytes: number;
  /** Set when the bot runs as root: the agent's dedicated uid/gid. */
  runAs?: { uid: number; gid: number; nprocLimit: number };
  /** Synthetic /etc/passwd and /etc/group naming the agent's uid. */
  identityFiles?: { passwd: string; group: string };
  agentId: string;
};

/** System folders a command needs, read-only. Merged-/usr links are recreated as links. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"];
const ETC_FILES = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/mime.types",
  "/etc/gitconfig",
];

export function bwrapArgs(options: BwrapOptions, cwd: string, marker: string): string[] {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    ...(options.network ? [] : ["--unshare-net"]),
    "--hostname",
    `laoding-${options.agentId}`.slice(0, 63),
    "--cap-drop",
    "ALL",
    "--clearenv",
    "--setenv", "PATH", TOOL_PATH,
    "--setenv", "HOME", options.home,
    "--setenv", "LANG", "C.UTF-8",
    "--setenv", "TERM", "dumb",
    "--setenv", "TMPDIR", "/tmp",
    "--setenv", "USER", `agent-${options.agentId}`,
    "--setenv", CALL_TAG_VARIABLE, marker,
  ];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    if (lstatSync(dir).isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  for (const file of ETC_FILES) args.push("--ro-bind-try", file, file);
  if (options.network) args.push("--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
  if (options.identityFiles) {
    args.push("--ro-bind", options.identityFiles.passwd, "/etc/passwd", "--ro-bind", options.identityFiles.group, "/etc/group");
  }
  args.push("--proc", "/proc", "--dev", "/dev", "--size", String(options.tmpSizeBytes), "--tmpfs", "/tmp");
  // Later mounts win: writable trees after the system, read-only carve-outs after those.
  for (const dir of options.writable) args.push("--bind", dir, dir);
  for (const dir of options.readOnly) args.push("--ro-bind", dir, dir);
  args.push("--remount-ro", "/", "--chdir", cwd);
  return args;
}

export function bwrapLauncher(options: BwrapOptions): Launcher {
  return {
    mode: "bwrap",
    launch(command, cwd, marker) {
      const sandboxed = ["bwrap", "--json-status-fd", "3", ...bwrapArgs(options, cwd, marker), "--", "/bin/bash", "--noprofile", "--norc", "-c", command];
      const argv = options.runAs
        ? [
            "prlimit",
            `--nproc=${options.runAs.nprocLimit}`,
            "--",
            "setpriv",
            `--reuid=${options.runAs.uid}`,
            `--regid=${options.runAs.gid}`,
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
            ...sandboxed,
          ]
        : sandboxed;
      return { file: argv[0] as string, args: argv.slice(1), env: { PATH: TOOL_PATH, LANG: "C.UTF-8" }, statusFd: 3 };
    },
  };
}
