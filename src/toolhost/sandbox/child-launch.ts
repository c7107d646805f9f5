/**
 * How the parent starts an agent's toolhost child so that the child never holds more
 * authority than its agent (docs/isolation.md has the reasoning):
 *
 * - as root, the child runs as the agent's uid (setpriv: no capabilities, no groups)
 *   under a process limit; a race between a path check and an act can then only reach
 *   what that uid may reach, which the workspace's modes restrict to the agent's trees;
 * - with a jail (bwrap mode, or when the agent's uid cannot reach its trees through a
 *   mode-700 parent such as /root), the child runs inside a bubblewrap mount namespace
 *   where only the system folders, the bot's code (read-only) and the agent's trees
 *   exist, at their real paths. As root, bwrap starts privileged (no user namespace) so
 *   it can open every bind source, creates the trees' ancestors itself with mode 0755,
 *   keeps only the capabilities setpriv needs, and setpriv drops to the agent's uid
 *   before Node starts; as a non-root user, bwrap's own user namespace does the job;
 * - in every case nothing above fd 2 reaches the child, its environment holds only the
 *   start-up message, and the child never reads the bot's configuration.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import type { AgentCgroup } from "./agent-cgroup.js";
import type { IdentityFiles } from "./agent-identity.js";
import { agentNamespaces, outermostPaths, sizedDev, TOOL_PATH } from "./command-launchers.js";
import { withInheritedFdsClosed } from "./fd-closer.js";
import { STARTUP_VARIABLE, type ToolhostStartup } from "./startup-message.js";

/** System folders bound read-only into the jail; merged-/usr links are recreated as links. */
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

export type ChildLaunchOptions = {
  startup: ToolhostStartup;
  /** The Node program and its arguments (loader flags, entry file). */
  node: { execPath: string; args: string[] };
  /** Files and folders of the bot's code the child needs, bound read-only in a jail. */
  codePaths: string[];
  /** Set when the bot runs as root: the child drops to this uid/gid. */
  runAs?: { uid: number; gid: number; nprocLimit: number; identityFiles: IdentityFiles };
  jail: boolean;
  /** The agent's memory and pids groups: the first process of the chain joins them (as root), so everything after is inside. */
  cgroup?: AgentCgroup;
};

export type ChildLaunch = { file: string; args: string[]; env: Record<string, string> };

/**
 * The child's environment: a path, a locale and the start-up message; nothing of the bot's.
 * One malloc arena: glibc gives each thread that allocates (libuv's pool, V8's helpers) an
 * arena of its own that keeps what was freed in it, and every agent pays for a child
 * (1.2-1.5 MiB less once quiet, up to 6 after long bursts; no slower: bench/README.md).
 */
function childEnv(startup: ToolhostStartup): Record<string, string> {
  return {
    PATH: TOOL_PATH,
    LANG: "C.UTF-8",
    MALLOC_ARENA_MAX: "1",
    HOME: startup.workTree,
    TMPDIR: "/tmp",
    [STARTUP_VARIABLE]: JSON.stringify(startup),
  };
}

function dropPrivileges(runAs: ChildLaunchOptions["runAs"]): string[] {
  if (!runAs) return [];
  return [
    "/usr/bin/prlimit",
    `--nproc=${runAs.nprocLimit}`,
    "--",
    // no_new_privs: a setuid program a command runs never gains what the agent's uid lacks.
    "/usr/bin/setpriv",
    `--reuid=${runAs.uid}`,
    `--regid=${runAs.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
  ];
}

/**
 * Joins the groups before anything else runs: a process moved in later would leave the
 * ones it had already forked (bwrap's own) outside. `$$` is the shell's pid, which the
 * exec keeps for the whole chain; a refused write stops the launch (exit 125) rather than
 * starting the child without its bounds.
 */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

function inCgroup(cgroup: AgentCgroup | undefined, argv: string[]): string[] {
  if (!cgroup || cgroup.procsFiles.length === 0) return argv;
  return ["/bin/sh", "-c", JOIN_SCRIPT, "laoding-cgroup", ...cgroup.procsFiles, "--", ...argv];
}

export function planChildLaunch(options: ChildLaunchOptions): ChildLaunch {
  const env = childEnv(options.startup);
  const payload = [...dropPrivileges(options.runAs), options.node.execPath, ...options.node.args];
  if (!options.jail) {
    const argv = inCgroup(options.cgroup, withInheritedFdsClosed(payload));
    return { file: argv[0] as string, args: argv.slice(1), env };
  }
  const argv = inCgroup(options.cgroup, [
    options.startup.bwrapPath,
    ...jailArgs(options, env),
    "--",
    ...withInheritedFdsClosed(payload),
  ]);
  return { file: argv[0] as string, args: argv.slice(1), env: { PATH: TOOL_PATH, LANG: "C.UTF-8" } };
}

function jailArgs(options: ChildLaunchOptions, env: Record<string, string>): string[] {
  const { startup, runAs } = options;
  const args = [
    "--die-with-parent",
    "--new-session",
    ...(runAs ? [] : ["--unshare-user"]),
    ...agentNamespaces(startup.agentId, startup.network),
    // setpriv needs these to drop to the agent's uid; it clears every set before Node runs.
    ...(runAs ? ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"] : []),
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(env)) args.push("--setenv", name, value);
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    if (lstatSync(dir).isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  // Folders bwrap creates for binds come out 0700 when it runs as root: make /etc passable.
  args.push("--perms", "0755", "--dir", "/etc");
  for (const file of ETC_FILES) args.push("--ro-bind-try", file, file);
  if (startup.network) args.push("--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf");
  if (runAs)
    args.push(
      "--ro-bind",
      runAs.identityFiles.passwd,
      "/etc/passwd",
      "--ro-bind",
      runAs.identityFiles.group,
      "/etc/group",
    );
  // Every tmpfs has a size: pages written there are memory, held until the jail ends.
  args.push(
    "--proc",
    "/proc",
    ...sizedDev(),
    "--size",
    String(startup.tmpSizeBytes),
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
  );

  const code = options.codePaths.filter((path) => !isUnderSystemDir(path));
  const writable = startup.roots.filter((root) => root.writable).map((root) => root.path);
  const readOnly = startup.roots.filter((root) => !root.writable).map((root) => root.path);
  // Left to bwrap, the ancestors of a bind come out mode 0700 and the agent's uid could
  // not pass; a host parent such as /root (0700) becomes a 0755 tmpfs folder in here.
  const egress = startup.egress ? [startup.egress.socketPath] : [];
  for (const dir of ancestorsOf([...code, ...writable, ...readOnly, ...egress]))
    args.push("--perms", "0755", "--dir", dir);
  for (const path of code) args.push("--ro-bind", path, path);
  // The egress proxy's socket of this agent, at its own path (under the jail's fresh /tmp
  // when the bot keeps it in the host's): the jail has no other way out (startup-message.ts).
  for (const path of egress) args.push("--bind", path, path);
  // Later mounts win: writable trees, then read-only carve-outs inside them.
  for (const dir of outermostPaths(writable)) args.push("--bind", dir, dir);
  for (const dir of readOnly) args.push("--ro-bind", dir, dir);
  // Root without capabilities cannot enter the agent's 0700 tree: start at /; the child needs no cwd.
  args.push("--remount-ro", "/", "--chdir", "/");
  return args;
}

function isUnderSystemDir(path: string): boolean {
  return SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}${sep}`));
}

/** Every proper ancestor of the paths (not `/`, not system folders, not /tmp itself), shortest first. */
export function ancestorsOf(paths: string[]): string[] {
  const found = new Set<string>();
  for (const path of paths) {
    for (let dir = dirname(path); dir !== sep && dir !== "."; dir = dirname(dir)) {
      if (dir !== "/tmp" && !isUnderSystemDir(dir)) found.add(dir);
    }
  }
  const bound = new Set(paths);
  return [...found]
    .filter((dir) => !bound.has(dir))
    .sort((a, b) => a.split(sep).length - b.split(sep).length || a.localeCompare(b));
}

/**
 * The parts of the bot's code a child needs: the compiled (or, under tsx, source) tree
 * that holds the entry, node_modules, package.json and tsconfig.json, and the Node
 * binary when it lives outside the system folders.
 */
export function childCodePaths(packageRoot: string, entry: string, execPath: string): string[] {
  const top = entry.slice(packageRoot.length + 1).split(sep)[0] as string;
  const paths = [
    join(packageRoot, top),
    join(packageRoot, "node_modules"),
    join(packageRoot, "package.json"),
    join(packageRoot, "tsconfig.json"),
    execPath,
  ];
  return [...new Set(paths.filter((path) => existsSync(path)))];
}
