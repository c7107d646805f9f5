/**
 * The shell runner's promise that nothing a command started survives the call, at the
 * level where it is kept. bwrap's outer process exits as soon as the command does, while
 * the kernel is still killing the rest of the pid namespace: measured here, about 260 of
 * 300 forked children were still alive at that moment and half of them 50 ms later.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bwrapLauncher, noneLauncher } from "../../src/toolhost/sandbox/command-launchers.js";
import { createShellRunner, type ShellRunner, type ShellRunRequest } from "../../src/toolhost/shell/shell-runner.js";
import { tempDir } from "../helpers/temp-dir.js";

const FORKS = 300;
const forkBomb = (tag: string) => `python3 -c "
import os, time
for i in range(${FORKS}):
    if os.fork() == 0:
        # Like a daemon: let go of the output pipes, so their end says nothing.
        null = os.open('/dev/null', os.O_WRONLY); os.dup2(null, 1); os.dup2(null, 2)
        time.sleep(60); os._exit(0)
print('forked', '${tag}')"`;

/** Processes (zombies included: they are not reaped yet) whose command line carries the tag. */
function processesTagged(tag: string): number {
  let count = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(tag)) count += 1;
    } catch {
      // Ended while we looked.
    }
  }
  return count;
}

async function runBomb(runner: ShellRunner, cwd: string, tag: string) {
  return runner.run({
    command: forkBomb(tag),
    cwd,
    timeoutMs: 20_000,
    maxCaptureBytes: 4096,
    signal: new AbortController().signal,
  });
}

describe("shell runner teardown", () => {
  it("bwrap: the call returns only after every process of the pid namespace is gone", async () => {
    const home = tempDir();
    const runner = createShellRunner(
      bwrapLauncher({
        writable: [home],
        readOnly: [],
        home,
        network: false,
        tmpSizeBytes: 1 << 20,
        agentId: "teardown",
        memoryLimitBytes: 1 << 30,
        bwrapPath: "/usr/bin/bwrap",
      }),
    );
    for (const round of [1, 2, 3]) {
      const tag = `teardown-bwrap-${round}-${process.pid}`;
      const result = await runBomb(runner, home, tag);
      expect(result.exitCode).toBe(0);
      expect(Buffer.concat([result.head, result.tail]).toString()).toBe(`forked ${tag}\n`);
      expect(processesTagged(tag)).toBe(0);
    }
    // Three fork bombs torn down one after another: about 7 s alone, much more on a busy machine.
  }, 60_000);

  it("none: background children in the group and setsid escapees are gone when the call returns", async () => {
    const home = tempDir();
    const runner = createShellRunner(
      noneLauncher({ home, ownerPid: process.pid, agentId: "teardown", memoryLimitBytes: 1 << 30 }),
    );
    const tag = `teardown-none-${process.pid}`;
    const result = await runner.run({
      // bash -c '...; true' keeps a bash carrying the tag as $0 alive beside each sleep.
      command: `bash -c 'sleep 61; true' ${tag} & python3 -c "import subprocess; subprocess.Popen(['bash', '-c', 'sleep 62; true', '${tag}'], start_new_session=True)" && echo started`,
      cwd: home,
      timeoutMs: 20_000,
      maxCaptureBytes: 4096,
      signal: new AbortController().signal,
    });
    expect(result.head.toString()).toBe("started\n");
    expect(processesTagged(tag)).toBe(0);
  });
});

/**
 * What a call reports, pinned at the runner: the environment the command gets, the
 * deadline and the cancel (the whole group killed, none of it left), the output cap and
 * flood, bytes kept as they came, and a program that cannot start.
 */
describe("shell runner results", () => {
  const run = (runner: ShellRunner, request: Partial<ShellRunRequest> & { command: string; cwd: string }) =>
    runner.run({ timeoutMs: 20_000, maxCaptureBytes: 4096, signal: new AbortController().signal, ...request });
  const noneRunner = (home: string) =>
    createShellRunner(noneLauncher({ home, ownerPid: process.pid, agentId: "results", memoryLimitBytes: 1 << 30 }));

  it("the command gets the launcher's environment and nothing of the caller's", async () => {
    const home = tempDir();
    process.env.LAODING_RUNNER_LEAK_CHECK = "leaked";
    try {
      const result = await run(noneRunner(home), { command: "env", cwd: home });
      const names = Buffer.concat([result.head, result.tail])
        .toString()
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => line.slice(0, line.indexOf("=")))
        .sort();
      // bash adds PWD, SHLVL and `_` of its own.
      expect(names).toEqual(
        [
          "HOME",
          "LANG",
          "LAODING_TOOLHOST_PID",
          "LAODING_TOOL_CALL",
          "PATH",
          "PWD",
          "SHLVL",
          "TERM",
          "TMPDIR",
          "USER",
          "_",
        ].sort(),
      );
      expect(result.exitCode).toBe(0);
    } finally {
      delete process.env.LAODING_RUNNER_LEAK_CHECK;
    }
  });

  it("an exit code and both streams are reported as they are", async () => {
    const home = tempDir();
    const result = await run(noneRunner(home), { command: "echo out; echo err >&2; exit 3", cwd: home });
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false, flooded: false });
    expect(Buffer.concat([result.head, result.tail]).toString().split("\n").sort()).toEqual(["", "err", "out"]);
  });

  it("bytes stay bytes: invalid UTF-8 is not decoded or replaced", async () => {
    const home = tempDir();
    const result = await run(noneRunner(home), { command: "printf '\\xff\\xfe\\x80ok'", cwd: home });
    expect(Buffer.concat([result.head, result.tail])).toEqual(Buffer.from([0xff, 0xfe, 0x80, 0x6f, 0x6b]));
    expect(result.totalBytes).toBe(5);
  });

  it("the deadline kills the whole group, and the call returns with nothing left", async () => {
    const home = tempDir();
    const tag = `deadline-none-${process.pid}`;
    const started = Date.now();
    const result = await run(noneRunner(home), {
      command: `bash -c 'sleep 61; true' ${tag} & echo started; sleep 62`,
      cwd: home,
      timeoutMs: 500,
    });
    expect(result).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: "SIGKILL" });
    expect(result.head.toString()).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(processesTagged(tag)).toBe(0);
  });

  it("a cancelled call kills the whole group and says it was cancelled, not timed out", async () => {
    const home = tempDir();
    const tag = `cancel-none-${process.pid}`;
    const cancel = new AbortController();
    setTimeout(() => cancel.abort(), 300);
    const result = await run(noneRunner(home), {
      command: `bash -c 'sleep 61; true' ${tag} & sleep 62`,
      cwd: home,
      signal: cancel.signal,
    });
    expect(result).toMatchObject({ timedOut: false, cancelled: true, exitCode: null, signal: "SIGKILL" });
    expect(processesTagged(tag)).toBe(0);
  });

  it("a deadline that passes after the command ended kills nothing and is not reported", async () => {
    const home = tempDir();
    const result = await run(noneRunner(home), { command: "echo done", cwd: home, timeoutMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(result).toMatchObject({ timedOut: false, cancelled: false, exitCode: 0 });
  });

  it("output keeps its head and tail, and a flood past four times the cap kills the command", async () => {
    const home = tempDir();
    const result = await run(noneRunner(home), {
      command: "printf 'HEAD'; yes 0123456789",
      cwd: home,
      maxCaptureBytes: 1000,
    });
    expect(result.flooded).toBe(true);
    expect(result.signal ?? result.exitCode).toBeTruthy();
    expect(result.totalBytes).toBeGreaterThan(4000);
    expect(result.head.length).toBe(500);
    expect(result.head.subarray(0, 4).toString()).toBe("HEAD");
    expect(result.tail.length).toBe(500);
  });

  it("a program that cannot start is exit code 127 with the reason", async () => {
    const home = tempDir();
    const runner = createShellRunner({
      mode: "none",
      launch: () => ({ file: "/nonexistent/laoding-no-such-program", args: [], env: {} }),
    });
    const result = await run(runner, { command: "true", cwd: home });
    expect(result.exitCode).toBe(127);
    expect(result.signal).toBeNull();
    expect(result.head.toString()).toBe(
      "cannot start the command: spawn /nonexistent/laoding-no-such-program ENOENT\n",
    );
  });
});
