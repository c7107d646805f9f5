/**
 * Chooses and prepares the OS sandbox for an agent's shell commands.
 * auto: bwrap when a probe command runs under it, otherwise none (with a warning);
 * bwrap: a failing probe stops start-up with the reason; none: trust mode.
 * When the bot runs as root, commands run as the agent's dedicated uid, which is given
 * ownership of the agent's trees (SANDBOX.md: root inside bwrap is no sandbox).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lchownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bwrapLauncher, noneLauncher, type BwrapOptions } from "./shell/launchers.js";
import { launchStdio, type Launcher } from "./shell/shell-runner.js";
import { keepOwnership, type Ownership } from "./tools/define-tool.js";

export type SandboxMode = "auto" | "bwrap" | "none";

export type SandboxSetup = {
  launcher: Launcher;
  ownership: Ownership;
  /** Set when auto mode fell back to none, with the reason. */
  warning?: string;
  uid?: number;
};

export type SandboxRequest = {
  mode: SandboxMode;
  agentId: string;
  network: boolean;
  workTree: string;
  writable: string[];
  readOnly: string[];
  uidBase: number;
  nprocLimit: number;
  tmpSizeBytes: number;
  /** A folder for the synthetic passwd/group files (world-readable). */
  runtimeDir: string;
  isRoot: boolean;
};

export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
}

const UID_SPAN = 50_000;

/** A stable uid per agent id (FNV-1a), so restarts and hosts agree without a registry. */
export function agentUid(agentId: string, base: number): number {
  let hash = 0x811c9dc5;
  for (const char of Buffer.from(agentId, "utf8")) {
    hash ^= char;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return base + (hash % UID_SPAN);
}

export function prepareSandbox(request: SandboxRequest): SandboxSetup {
  if (request.mode === "none") return { launcher: noneLauncher({ home: request.workTree, ownerPid: process.pid }), ownership: keepOwnership };
  const uid = request.isRoot ? agentUid(request.agentId, request.uidBase) : undefined;
  const options: BwrapOptions = {
    writable: request.writable,
    readOnly: request.readOnly,
    home: request.workTree,
    network: request.network,
    tmpSizeBytes: request.tmpSizeBytes,
    agentId: request.agentId,
  };
  if (uid !== undefined) {
    options.runAs = { uid, gid: uid, nprocLimit: request.nprocLimit };
    options.identityFiles = writeIdentityFiles(request.runtimeDir, request.agentId, uid, request.workTree);
    for (const tree of request.writable) giveTree(tree, uid);
  }
  const launcher = bwrapLauncher(options);
  const problem = probe(launcher, request.workTree);
  if (problem === undefined) {
    return { launcher, ownership: uid === undefined ? keepOwnership : ownedBy(uid), ...(uid !== undefined ? { uid } : {}) };
  }
  if (request.mode === "bwrap") {
    throw new SandboxUnavailableError(
      `TOOLHOST_SANDBOX=bwrap but bubblewrap cannot run here: ${problem}. Install bubblewrap (apt-get install bubblewrap), make the workspace's parent folders traversable (chmod o+x), or set TOOLHOST_SANDBOX=none to run without the OS sandbox`,
    );
  }
  return {
    launcher: noneLauncher({ home: request.workTree, ownerPid: process.pid }),
    ownership: keepOwnership,
    warning: `bubblewrap is not usable (${problem}); shell commands run WITHOUT the OS sandbox (trust mode)`,
  };
}

function probe(launcher: Launcher, cwd: string): string | undefined {
  const spec = launcher.launch("true", cwd, "probe");
  // The same stdio as a real call: bwrap refuses to start without its status fd.
  const result = spawnSync(spec.file, spec.args, { cwd, env: spec.env, encoding: "utf8", timeout: 10_000, stdio: launchStdio(spec) });
  if (result.error) return (result.error as NodeJS.ErrnoException).code === "ENOENT" ? `${spec.file} is not installed` : result.error.message;
  if (result.status !== 0) return (result.stderr || `exit code ${result.status}`).trim().split("\n")[0];
  return undefined;
}

function ownedBy(uid: number): Ownership {
  // Best effort: a file we cannot chown stays usable by its owner, the bot.
  return {
    apply(path) {
      try {
        chownSync(path, uid, uid);
      } catch {
        // See above.
      }
    },
    applyToLink(path) {
      try {
        lchownSync(path, uid, uid);
      } catch {
        // See above.
      }
    },
  };
}

/** Gives the agent's uid its trees, touching only entries it does not own yet. Never follows links. */
function giveTree(root: string, uid: number): void {
  const stack = [root];
  while (stack.length > 0) {
    const path = stack.pop() as string;
    let stats;
    try {
      stats = lstatSync(path);
    } catch {
      continue;
    }
    if (stats.uid !== uid || stats.gid !== uid) {
      try {
        // lchown-like: a link's own owner changes, not its target's.
        if (stats.isSymbolicLink()) continue;
        chownSync(path, uid, uid);
      } catch {
        continue;
      }
    }
    if (stats.isDirectory()) for (const name of readdirSync(path)) stack.push(join(path, name));
  }
}

function writeIdentityFiles(runtimeDir: string, agentId: string, uid: number, home: string): { passwd: string; group: string } {
  mkdirSync(runtimeDir, { recursive: true });
  chmodSync(runtimeDir, 0o755);
  const passwd = join(runtimeDir, "passwd");
  const group = join(runtimeDir, "group");
  writeFileSync(passwd, `agent-${agentId}:x:${uid}:${uid}:LaodingBot agent ${agentId}:${home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`, { mode: 0o644 });
  writeFileSync(group, `agent-${agentId}:x:${uid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
  return { passwd, group };
}
