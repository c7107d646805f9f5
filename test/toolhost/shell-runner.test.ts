/**
 * The shell runner's promise that nothing a command started survives the call, at the
 * level where it is kept. bwrap's outer process exits as soon as the command does, while
 * the kernel is still killing the rest of the pid namespace: measured here, about 260 of
 * 300 forked children were still alive at that moment and half of them 50 ms later.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bwrapLauncher, noneLauncher } from "../../src/toolhost/sandbox/command-launchers.js";
import { createShellRunner, type ShellRunner } from "../../src/toolhost/shell/shell-runner.js";
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
