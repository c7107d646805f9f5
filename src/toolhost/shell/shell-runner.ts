/**
 * Runs one command line in its own process group, captures output with a hard cap,
 * enforces a deadline, and makes sure nothing it started survives the call:
 * - the process group is SIGKILLed when the command ends, times out, is cancelled or
 *   floods its output (`cmd &` children share the group);
 * - a per-call marker in the environment finds processes that left the group with
 *   `setsid` (in bwrap mode, and in none mode inside the jail, the command's own pid
 *   namespace already takes them down); when the child has a uid of its own, whatever of
 *   that uid left the child's process tree is killed too, tag or no tag;
 * - the call returns only once those processes are gone. bwrap's outer process exits as
 *   soon as the command does, while the kernel is still killing the rest of the pid
 *   namespace (a fork bomb's children, say); the namespace's init is the last to go, so
 *   the runner waits for it.
 * The launcher decides how the command is wrapped (plain bash, or bwrap as the agent's uid).
 *
 * execa starts the command and ends it at the deadline or on the caller's cancel
 * (`timeout`, `cancelSignal`, and which of them fired), with exactly the launcher's
 * stdio and environment. The rest is done here, because execa cannot (docs/toolhost.md,
 * "Running a command"):
 * - its kills reach the command's pid only, never its process group (`detached` makes
 *   the group, nothing in execa signals it): the group is killed here when the pid ends;
 * - `maxBuffer` keeps the head of each stream and counts each stream alone: the answer
 *   keeps head and tail of both together, and a flood is counted over both;
 * - its decoding is not byte-exact: the output stays bytes, decoded once by the tool;
 * - its result waits for every pipe to close, which a process outside the group can hold
 *   open: the pipes are closed here after a short grace.
 * `cleanup` stays off: with `detached` it does nothing, and it would hook every signal of
 * the child; `killAll` is the toolhost's own clean-up.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { CALL_TAG_VARIABLE, killTagged } from "../process-tags.js";

/** Output past this many times the capture limit is a flood: the command is killed. */
export const FLOOD_FACTOR = 4;

/**
 * execa, loaded with the first command: a child that never runs one (most calls read and
 * write files) does not pay for its ~130 modules (about 1.5 MiB resident, docs/toolhost.md).
 */
let execaModule: Promise<typeof import("execa")> | undefined;
const loadExeca = () => (execaModule ??= import("execa"));

export type LaunchSpec = {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Set when the launcher reports the sandbox's init pid as bwrap's JSON status on fd 3. */
  statusFd?: 3;
};
/** The stdio of a launched command: output piped, and fd 3 piped when the launcher reports status there. */
export function launchStdio(spec: LaunchSpec): ["ignore", "pipe", "pipe", "ignore" | "pipe"] {
  return ["ignore", "pipe", "pipe", spec.statusFd === undefined ? "ignore" : "pipe"];
}

/** Builds the process to start for a command line run in `cwd`. */
export type Launcher = { mode: "bwrap" | "none"; launch(command: string, cwd: string, marker: string): LaunchSpec };

export type ShellRunRequest = {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** Output bytes kept at most; beyond it the command is killed. */
  maxCaptureBytes: number;
  signal: AbortSignal;
};

export type ShellRunResult = {
  /** The call's tag (its processes carry it; so does its proxy URL, which the egress forwarder reads). */
  marker: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Head and tail of the combined stdout/stderr, at most maxCaptureBytes. */
  head: Buffer;
  tail: Buffer;
  totalBytes: number;
  timedOut: boolean;
  cancelled: boolean;
  /** The command was killed because its output passed the capture cap. */
  flooded: boolean;
  /** The command was killed because it held more processes than one call's share. */
  overProcessShare: boolean;
  durationMs: number;
};

export type ShellRunner = {
  mode: "bwrap" | "none";
  run(request: ShellRunRequest): Promise<ShellRunResult>;
  /** Kills every command still running (the toolhost is exiting). */
  killAll(): void;
};

/** How long to wait for pipes to drain after the command's exit before closing them. */
const DRAIN_GRACE_MS = 200;
/** How long a call waits for the processes it killed to be gone before returning anyway. */
const TEARDOWN_LIMIT_MS = 5_000;

export type ShellRunnerOptions = {
  /**
   * Kills what the agent's uid runs outside the child's process tree and returns the
   * pids (sandbox/leftover-processes.ts): set when the child has a uid of its own, so a
   * command's `setsid` child that dropped its tag is gone when the call ends too.
   */
  killLeftovers?: () => number[];
  /**
   * One call's share of the agent's processes: a call whose command tree holds more tasks
   * is killed at the next check (`tasksBelow` counts them from a process table), so one
   * call cannot hold every pid of the agent for its whole timeout while other users'
   * commands fail to start.
   */
  processShare?: { maxTasks: number; tasksBelow: (roots: number[]) => Map<number, number> };
};

/** How often running commands' task counts are checked against their share. */
const SHARE_CHECK_MS = 200;

export function createShellRunner(launcher: Launcher, options: ShellRunnerOptions = {}): ShellRunner {
  const running = new Map<number, string>();
  /** Running calls that a share check may stop, by their command's pid. */
  const overShare = new Map<number, () => void>();
  let shareTimer: NodeJS.Timeout | undefined;
  const checkShares = () => {
    if (!options.processShare || overShare.size === 0) return;
    const counts = options.processShare.tasksBelow([...overShare.keys()]);
    for (const [pid, stopForShare] of overShare)
      if ((counts.get(pid) ?? 0) > options.processShare.maxTasks) stopForShare();
  };
  const watchShares = (pid: number, stopForShare: () => void) => {
    if (!options.processShare) return;
    overShare.set(pid, stopForShare);
    shareTimer ??= setInterval(checkShares, SHARE_CHECK_MS);
    shareTimer.unref();
  };
  const unwatchShares = (pid: number) => {
    overShare.delete(pid);
    if (overShare.size === 0 && shareTimer) {
      clearInterval(shareTimer);
      shareTimer = undefined;
    }
  };

  /** Kills the call's process group (and marked escapees); returns the pids killed outside the group. */
  const killGroup = (pid: number, marker: string): number[] => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    return launcher.mode === "none" ? killTagged(CALL_TAG_VARIABLE, marker) : [];
  };

  return {
    mode: launcher.mode,
    killAll() {
      for (const [pid, marker] of running) killGroup(pid, marker);
      running.clear();
      options.killLeftovers?.();
    },
    async run(request) {
      const { execa } = await loadExeca();
      const started = Date.now();
      const marker = randomUUID();
      const spec = launcher.launch(request.command, request.cwd, marker);
      const subprocess = execa(spec.file, spec.args, {
        cwd: request.cwd,
        // The launcher's environment and nothing else (not the child's own).
        env: spec.env,
        extendEnv: false,
        // A process group of its own: killing the group takes the command's `cmd &` children along.
        detached: true,
        stdio: launchStdio(spec),
        // The output is read here, as bytes: head and tail, and a flood counted over both streams.
        buffer: false,
        encoding: "buffer",
        // The deadline and the caller's cancel SIGKILL the command's pid; its group follows when it ends (below).
        timeout: request.timeoutMs,
        cancelSignal: request.signal,
        killSignal: "SIGKILL",
        forceKillAfterDelay: false,
        cleanup: false,
        reject: false,
      });
      // Both are piped above; the four-entry stdio only loses that in the typings.
      const stdout = subprocess.stdout as Readable;
      const stderr = subprocess.stderr as Readable;
      const status = spec.statusFd === undefined ? undefined : (subprocess.stdio[spec.statusFd] as Readable);
      const sandboxInit = status && readSandboxInit(status);
      const half = Math.floor(request.maxCaptureBytes / 2);
      const head: Buffer[] = [];
      let headBytes = 0;
      let tail = Buffer.alloc(0);
      let totalBytes = 0;
      let flooded = false;
      let overProcessShare = false;

      const pid = subprocess.pid;
      const stop = (): number[] => (pid === undefined ? [] : killGroup(pid, marker));
      const onData = (chunk: Buffer) => {
        totalBytes += chunk.length;
        if (headBytes < half) {
          const take = chunk.subarray(0, half - headBytes);
          head.push(take);
          headBytes += take.length;
          chunk = chunk.subarray(take.length);
        }
        if (chunk.length > 0) {
          tail = Buffer.concat([tail, chunk]);
          if (tail.length > half) tail = tail.subarray(tail.length - half);
        }
        // A flood: stop reading and kill, so neither side's memory grows with it.
        if (totalBytes > request.maxCaptureBytes * FLOOD_FACTOR && !flooded) {
          flooded = true;
          stop();
        }
      };
      stdout.on("data", onData);
      stderr.on("data", onData);
      if (pid !== undefined) {
        running.set(pid, marker);
        watchShares(pid, () => {
          overProcessShare = true;
          stop();
        });
      }

      // The command's end: its exit, or its failure to start (which has no exit).
      await new Promise<void>((ended) => {
        subprocess.once("exit", () => ended());
        subprocess.once("error", () => ended());
        void subprocess.then(
          () => ended(),
          () => ended(),
        );
      });
      // Whatever the command left behind in its group dies with it, and so does
      // anything of the agent's uid that left the child's process tree.
      const escapees = stop();
      if (pid !== undefined) {
        running.delete(pid);
        unwatchShares(pid);
      }
      if (options.killLeftovers) escapees.push(...options.killLeftovers());
      await closedOrGrace([stdout, stderr]);
      stdout.destroy();
      stderr.destroy();
      await settle(escapees, sandboxInit);
      // execa's result waits for every pipe it opened, the status one too.
      status?.destroy();
      const result = await subprocess;
      // A deadline or cancel that came after the command had ended killed nothing: execa
      // still names it, but only a signal that reached the live command counts
      // (`killed`: Node's flag, set by execa's kill only; the group is killed here without it).
      const notStarted = result.exitCode === undefined && result.signal === undefined;
      if (notStarted) head.push(Buffer.from(`cannot start the command: ${startError(result.cause)}\n`));
      return {
        marker,
        exitCode: notStarted ? 127 : (result.exitCode ?? null),
        signal: result.signal ?? null,
        head: Buffer.concat(head),
        tail,
        totalBytes,
        timedOut: result.timedOut && subprocess.killed,
        cancelled: result.isCanceled && subprocess.killed,
        flooded,
        overProcessShare,
        durationMs: Date.now() - started,
      };
    },
  };
}

/** What stopped a command from starting: Node's spawn error, as execa keeps it. */
function startError(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** Resolves once every stream has closed, or after the drain grace (what still holds a pipe is not waited for). */
async function closedOrGrace(streams: Readable[]): Promise<void> {
  const grace = new AbortController();
  const closed = streams
    .filter((stream) => !stream.closed)
    .map((stream) => new Promise<void>((resolve) => stream.once("close", () => resolve())));
  await Promise.race([
    Promise.all(closed),
    delay(DRAIN_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined),
  ]);
  grace.abort();
}

type ProcessIdentity = { pid: number; startTime: string };

/**
 * Reads bwrap's JSON status stream (one document per line) for `"child-pid"`: the pid,
 * seen from here, of the sandbox's init. Resolves undefined when the stream ends first.
 */
function readSandboxInit(stream: Readable): Promise<ProcessIdentity | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const done = (identity: ProcessIdentity | undefined) => {
      stream.removeAllListeners("data");
      stream.resume();
      resolve(identity);
    };
    stream.on("data", (chunk: Buffer) => {
      text = (text + chunk.toString("utf8")).slice(-4096);
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (!match) return;
      const pid = Number(match[1]);
      const startTime = processStartTime(pid);
      done(startTime === undefined ? undefined : { pid, startTime });
    });
    stream.once("close", () => done(undefined));
    stream.once("error", () => done(undefined));
  });
}

/** Field 22 of /proc/<pid>/stat, which tells a process from a later one reusing its pid; undefined once it is gone. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** Waits, bounded, until the killed escapees and the sandbox's init (the last of its namespace) are gone. */
async function settle(
  escapees: number[],
  sandboxInit: Promise<ProcessIdentity | undefined> | undefined,
): Promise<void> {
  const waited: ProcessIdentity[] = escapees.flatMap((pid) => {
    const startTime = processStartTime(pid);
    return startTime === undefined ? [] : [{ pid, startTime }];
  });
  const init = sandboxInit && (await Promise.race([sandboxInit, delay(DRAIN_GRACE_MS, undefined, { ref: false })]));
  if (init) waited.push(init);
  const deadline = Date.now() + TEARDOWN_LIMIT_MS;
  let alive = waited;
  while (
    (alive = alive.filter(({ pid, startTime }) => processStartTime(pid) === startTime)).length > 0 &&
    Date.now() < deadline
  ) {
    await delay(2);
  }
}
