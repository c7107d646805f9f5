/**
 * Runs one command line in its own process group, captures output with a hard cap,
 * enforces a deadline, and makes sure nothing it started survives the call:
 * - the process group is SIGKILLed when the command ends, times out, is cancelled or
 *   floods its output (`cmd &` children share the group);
 * - a per-call marker in the environment finds processes that left the group with
 *   `setsid` (in bwrap mode the pid namespace already takes them down).
 * The launcher decides how the command is wrapped (plain bash, or bwrap as the agent's uid).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

export type LaunchSpec = { file: string; args: string[]; env: Record<string, string> };
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
  durationMs: number;
};

export type ShellRunner = {
  mode: "bwrap" | "none";
  run(request: ShellRunRequest): Promise<ShellRunResult>;
  /** Kills every command still running (the toolhost is exiting). */
  killAll(): void;
};

export const MARKER_VARIABLE = "LAODING_TOOL_CALL";
/** How long to wait for pipes to drain after the command's exit before closing them. */
const DRAIN_GRACE_MS = 200;

export function createShellRunner(launcher: Launcher): ShellRunner {
  const running = new Map<number, string>();

  const killGroup = (pid: number, marker: string) => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    if (launcher.mode === "none") killMarked(marker);
  };

  return {
    mode: launcher.mode,
    killAll() {
      for (const [pid, marker] of running) killGroup(pid, marker);
      running.clear();
    },
    run(request) {
      return new Promise((resolve) => {
        const started = Date.now();
        const marker = randomUUID();
        const spec = launcher.launch(request.command, request.cwd, marker);
        const child = spawn(spec.file, spec.args, {
          cwd: request.cwd,
          env: spec.env,
          detached: true,
          shell: false,
          stdio: ["ignore", "pipe", "pipe"],
        });
        const half = Math.floor(request.maxCaptureBytes / 2);
        const head: Buffer[] = [];
        let headBytes = 0;
        let tail = Buffer.alloc(0);
        let totalBytes = 0;
        let timedOut = false;
        let cancelled = false;
        let flooded = false;
        let finished = false;

        const stop = () => {
          if (child.pid !== undefined) killGroup(child.pid, marker);
        };
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
          if (totalBytes > request.maxCaptureBytes * 4 && !flooded) {
            flooded = true;
            stop();
          }
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);

        const timer = setTimeout(() => {
          timedOut = true;
          stop();
        }, request.timeoutMs);
        const onAbort = () => {
          cancelled = true;
          stop();
        };
        request.signal.addEventListener("abort", onAbort, { once: true });
        if (child.pid !== undefined) running.set(child.pid, marker);

        const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          request.signal.removeEventListener("abort", onAbort);
          // Whatever the command left behind in its group dies with it.
          stop();
          if (child.pid !== undefined) running.delete(child.pid);
          const drained = () => {
            child.stdout.destroy();
            child.stderr.destroy();
            resolve({
              exitCode,
              signal,
              head: Buffer.concat(head),
              tail,
              totalBytes,
              timedOut,
              cancelled,
              flooded,
              durationMs: Date.now() - started,
            });
          };
          if (child.stdout.readableEnded && child.stderr.readableEnded) drained();
          else {
            let pending = 2;
            const grace = setTimeout(drained, DRAIN_GRACE_MS);
            const onEnd = () => {
              pending -= 1;
              if (pending === 0) {
                clearTimeout(grace);
                drained();
              }
            };
            child.stdout.once("close", onEnd);
            child.stderr.once("close", onEnd);
          }
        };
        child.once("exit", finish);
        child.once("error", (error) => {
          head.push(Buffer.from(`cannot start the command: ${error.message}\n`));
          finish(127, null);
        });
      });
    },
  };
}

/** Kills processes carrying this call's marker (they escaped the group with setsid). */
function killMarked(marker: string): void {
  const needle = `${MARKER_VARIABLE}=${marker}`;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(needle)) process.kill(Number(pid), "SIGKILL");
    } catch {
      // Gone, or not ours to read.
    }
  }
}
