/**
 * Issue 32's findings 3-5 as the attacks that got through, run against the real launch
 * chain (planned and probed by the product, real bwrap, real children, as root):
 * memory that no per-process limit bounded, a command's leftover that killed the
 * toolhost later, and none mode as root leaking between agents.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { readAgentsFile } from "../../src/config/agents.js";
import { prepareToolhostLaunches, SandboxUnavailableError } from "../../src/runtime/toolhost-launch.js";
import { readAgentCgroup } from "../../src/toolhost/sandbox/agent-cgroup.js";
import { planChildLaunch } from "../../src/toolhost/sandbox/child-launch.js";
import { agentUid } from "../../src/toolhost/sandbox/agent-identity.js";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { CLI_ENTRY, giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { isAlive, livePids } from "../helpers/toolhost.js";

const isRoot = process.getuid?.() === 0;
const ALLOWED = "ls,cat,echo,head,python3,curl,id,kill";

function text(result: ToolResult): string {
  return `${result.ok ? "ok" : result.error.code}: ${result.output ?? ""}`;
}

/** A script the agent writes into its own tree, then runs (inline code is refused by the allowlist). */
function script(workspace: RealWorkspace, agentId: string, name: string, body: string): { cwd: string; path: string } {
  const cwd = join(workspace.layout.agentTrees(agentId).workTree, "chat");
  mkdirSync(cwd, { recursive: true });
  const path = join(cwd, name);
  writeFileSync(path, body, { mode: 0o644 });
  giveToAgent(workspace, agentId, cwd);
  return { cwd, path };
}

/** Four workers, each well under the per-command RLIMIT_DATA, together over the agent's memory. */
const WORKERS = `import os, time
pids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(96 * 1024 * 1024)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        time.sleep(1.5)
        os._exit(0)
    pids.append(pid)
held = sum(1 for pid in pids if os.waitpid(pid, 0)[1] == 0)
print("workers that held their memory:", held)
`;

/** Writes MEGABYTES of zeros to PATH, a megabyte at a time (a redirection to a path outside the trees is refused by the allowlist). */
const FILL = `import sys
with open(sys.argv[1], "wb") as target:
    for _ in range(int(sys.argv[2])):
        target.write(b"\\0" * 1048576)
        target.flush()
print("wrote", sys.argv[2], "MiB")
`;

/**
 * The escape of finding 4: leave the call's process group, drop the environment the
 * runner looks for, and kill every toolhost child this uid can name a moment later.
 */
const LATE_KILLER = `import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve(sys.executable, [sys.executable, "-c", """
import os, signal, time
time.sleep(1.2)
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            if b'child-entry' in open('/proc/%s/cmdline' % pid, 'rb').read():
                os.kill(int(pid), signal.SIGKILL)
        except Exception:
            pass
time.sleep(30)
"""], {})
    os._exit(0)
print("planted")
`;

/**
 * Finding of the second attack: a command lowers its own out-of-memory score and raises
 * the toolhost's through /proc, then fills memory its own RSS does not show (SysV shared
 * memory), so the kernel takes the toolhost instead of the command.
 */
const OOM_FLIP = `import os, sys, ctypes, ctypes.util
def write(path, value):
    try:
        open(path, "w").write(value)
        return "written"
    except OSError as error:
        return error.strerror
print("own score:", write("/proc/self/oom_score_adj", "0"), flush=True)
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            if b"child-entry" in open("/proc/%s/cmdline" % pid, "rb").read():
                print("toolhost score:", write("/proc/%s/oom_score_adj" % pid, "1000"), flush=True)
        except OSError:
            pass
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
for i in range(int(sys.argv[1])):
    segment = libc.shmget(0x5000 + i, 8 << 20, 0o1000 | 0o600)
    address = libc.shmat(segment, None, 0)
    ctypes.memset(address, 1, 8 << 20)
    libc.shmdt(ctypes.c_void_p(address))
print("held", sys.argv[1], "x 8 MiB", flush=True)
`;

/** Holds every pid it can get for as long as the call may run. */
const PID_HOG = `import os, sys, time
started = 0
while started < 2000:
    try:
        pid = os.fork()
    except OSError as error:
        print("fork failed after", started, flush=True)
        break
    if pid == 0:
        os.execv("/bin/sleep", ["sleep", sys.argv[1]])
    started += 1
time.sleep(float(sys.argv[1]))
print("held", started, "processes")
`;

/** Allocates and touches MiB of memory, then says so. */
const ALLOC = `import sys
block = bytearray(int(sys.argv[1]) * 1024 * 1024)
for offset in range(0, len(block), 4096):
    block[offset] = 1
print("allocated", sys.argv[1])
`;

for (const mode of ["bwrap", "none", "none-unsafe"] as const) {
  describe.runIf(isRoot)(
    `TOOLHOST_SANDBOX=${mode} as root: one request never outlives its call or holds more than the agent's memory`,
    () => {
      let workspace: RealWorkspace;
      beforeAll(async () => {
        workspace = await realWorkspace({
          TOOLHOST_SANDBOX: mode,
          ALLOWED_COMMANDS: ALLOWED,
          TOOLHOST_MEMORY_LIMIT_MB: "256",
          TOOLHOST_AGENT_MEMORY_MB: "256",
          TOOLHOST_TMP_SIZE_MB: "16",
          SHELL_TIMEOUT_MS: "20000",
          // Its own uid range: leftovers are found by uid, and other files run agent "a" too.
          TOOLHOST_UID_BASE: String({ bwrap: 44_000, none: 45_000, "none-unsafe": 46_000 }[mode]),
        });
      });

      it("a command that leaves its group, drops its environment and kills the toolhost later is gone when the call ends", async () => {
        const { client, spawns } = realClient(workspace, "a");
        const { cwd, path } = script(workspace, "a", "late-killer.py", LATE_KILLER);
        const first = await client.ping();
        expect(text(await client.callTool({ name: "shell.exec", args: { command: `python3 ${path}` }, cwd }))).toBe(
          "ok: planted\n",
        );
        // Nothing of the agent's uid is left but its toolhost (and, under tsx, its esbuild service).
        const uid = agentUid("a", workspace.config.TOOLHOST_UID_BASE);
        const toolhost = livePids({ pattern: /child-entry|esbuild --service/ });
        expect(livePids({ uid }).filter((pid) => !toolhost.includes(pid))).toEqual([]);
        await delay(1_800);
        // The same child still answers: the killer never got to run.
        expect(spawns).toHaveLength(1);
        expect(await client.ping()).toMatchObject({ pid: first.pid });
        expect(text(await client.callTool({ name: "shell.exec", args: { command: "echo still here" }, cwd }))).toBe(
          "ok: still here\n",
        );
      });

      it("the agent's child and commands share one memory group: four workers under the per-command limit cannot hold 4 x 96 MiB", async () => {
        const launch = workspace.launches().agents.get("a");
        expect(launch?.cgroup, "as root, the agent has a memory and pids group").toBeDefined();
        const group = readAgentCgroup(launch!.cgroup!);
        expect(group.memoryLimitBytes).toBeLessThanOrEqual(256 * 1024 * 1024);
        expect(group.pidsMax).toBe(String(workspace.config.TOOLHOST_NPROC_LIMIT));
        const { client, spawns } = realClient(workspace, "a");
        await client.ping();
        // The child's whole launch chain is in the group from its first process on.
        expect(readAgentCgroup(launch!.cgroup!).members).toContain(spawns[0]?.pid);
        const { cwd, path } = script(workspace, "a", "workers.py", WORKERS);
        const result = await client.callTool({ name: "shell.exec", args: { command: `python3 ${path}` }, cwd });
        expect(text(result)).not.toMatch(/held their memory: 4/);
        expect(isAlive(spawns[0]?.pid), "the toolhost itself survives its command's memory use").toBe(true);
        expect(text(await client.callTool({ name: "shell.exec", args: { command: "echo after" }, cwd }))).toBe(
          "ok: after\n",
        );
      });

      if (mode !== "none-unsafe") {
        it("a command can neither lower its own out-of-memory score nor raise the toolhost's; filling memory its RSS hides takes the command, not the toolhost", async () => {
          const { client, spawns } = realClient(workspace, "a");
          const first = await client.ping();
          const { cwd, path } = script(workspace, "a", "oom-flip.py", OOM_FLIP);
          const result = text(
            await client.callTool({ name: "shell.exec", args: { command: `python3 ${path} 40` }, cwd }),
          );
          expect(result).not.toMatch(/own score: written|toolhost score: written/);
          expect(result).toMatch(/own score: (Read-only file system|Permission denied)/);
          expect(spawns, "the toolhost was never killed").toHaveLength(1);
          expect(await client.ping()).toMatchObject({ pid: first.pid });
        });

        it("shared memory a command leaves behind dies with it: the next user's command gets the agent's memory", async () => {
          const { client, spawns } = realClient(workspace, "a");
          const flip = script(workspace, "a", "oom-flip.py", OOM_FLIP);
          const alloc = script(workspace, "a", "alloc.py", ALLOC);
          // 160 MiB of SysV memory kept after the call (IPC_RMID is never asked for), without touching any score.
          expect(
            text(
              await client.callTool({
                name: "shell.exec",
                args: { command: `python3 ${flip.path} 20 keep` },
                cwd: flip.cwd,
              }),
            ),
          ).toMatch(/held 20 x 8 MiB/);
          expect(
            text(
              await client.callTool({
                name: "shell.exec",
                args: { command: `python3 ${alloc.path} 128` },
                cwd: alloc.cwd,
              }),
            ),
          ).toBe("ok: allocated 128\n");
          expect(spawns).toHaveLength(1);
        });

        it("one call cannot hold every pid of the agent: past its share it is killed, and the next command starts", async () => {
          const { client } = realClient(workspace, "a", { concurrency: 2 });
          const { cwd, path } = script(workspace, "a", "pid-hog.py", PID_HOG);
          const hog = await client.callTool({
            name: "shell.exec",
            args: { command: `python3 ${path} 15`, timeout_ms: 19_000 },
            cwd,
          });
          expect(text(hog)).toMatch(/^EXIT_NONZERO: /);
          expect(hog.ok ? "" : hog.error.reason).toMatch(/more processes than one call may hold/);
          expect(text(await client.callTool({ name: "shell.exec", args: { command: "echo next" }, cwd }))).toBe(
            "ok: next\n",
          );
        });
      }

      it("every tmpfs has a size: /dev/shm and /tmp fill up, /dev itself is read-only", async () => {
        // The host's /tmp and /dev in none-unsafe: nothing of the bot's to size (docs/isolation.md); the memory group still holds.
        if (mode === "none-unsafe") return;
        const { client } = realClient(workspace, "a");
        const { cwd, path } = script(workspace, "a", "fill.py", FILL);
        const fill = async (target: string, megabytes: number) =>
          text(
            await client.callTool({
              name: "shell.exec",
              args: { command: `python3 ${path} ${target} ${megabytes}` },
              cwd,
            }),
          );
        expect(await fill("/dev/shm/fill", 200)).toMatch(/^EXIT_NONZERO: [\s\S]*No space left on device/);
        expect(await fill("/tmp/fill", 100)).toMatch(/^EXIT_NONZERO: [\s\S]*No space left on device/);
        expect(await fill("/dev/planted", 1)).toMatch(
          /^EXIT_NONZERO: [\s\S]*(Read-only file system|Permission denied)/,
        );
      });
    },
  );
}

describe.runIf(isRoot)("none mode as root keeps agents in their own namespaces (finding 5)", () => {
  let workspace: RealWorkspace;
  let server: Server;
  beforeAll(async () => {
    workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none",
      ALLOWED_COMMANDS: ALLOWED,
      TOOLHOST_UID_BASE: "47000",
    });
    server = await new Promise<Server>((resolve) => {
      const listening = createServer((_request, response) => response.end("admin API"));
      listening.listen(0, "127.0.0.1", () => resolve(listening));
    });
    return () => server.close();
  });

  it("A cannot read B's process arguments, share a /tmp file with B, or reach the network with network:false", async () => {
    const a = realClient(workspace, "a").client;
    const b = realClient(workspace, "b");
    await b.client.ping();
    const bPid = b.spawns[0]?.pid as number;
    const cwdA = join(workspace.layout.agentTrees("a").workTree, "chat");
    const cwdB = join(workspace.layout.agentTrees("b").workTree, "chat");
    const inA = async (command: string) => text(await a.callTool({ name: "shell.exec", args: { command }, cwd: cwdA }));
    // B's processes, named by the host's pids: not there for A.
    expect(await inA(`cat /proc/${bPid}/cmdline`)).toMatch(/^EXIT_NONZERO: .*No such file/);
    expect(await inA("ls /proc")).not.toMatch(new RegExp(`\\b${bPid}\\b`));
    // A file A leaves open to all in /tmp is not B's /tmp.
    const { path } = script(
      workspace,
      "a",
      "drop.py",
      `import os\nfd = os.open("/tmp/drop", os.O_CREAT | os.O_WRONLY, 0o666)\nos.fchmod(fd, 0o666)\nprint("dropped")\n`,
    );
    expect(await inA(`python3 ${path}`)).toBe("ok: dropped\n");
    expect(text(await b.client.callTool({ name: "shell.exec", args: { command: "ls /tmp/drop" }, cwd: cwdB }))).toMatch(
      /^EXIT_NONZERO: .*No such file/,
    );
    expect(
      existsSync("/tmp/drop") && readFileSync("/tmp/drop", "utf8") === "" ? "host /tmp holds it" : "not on the host",
    ).toBe("not on the host");
    // The bot's loopback ports (the admin API here) and everything else: no network at all.
    const port = (server.address() as { port: number }).port;
    expect(await inA(`curl -sS -m 2 http://127.0.0.1:${port}/`)).toMatch(/^EXIT_NONZERO: curl: \(7\)/);
  });

  it("without namespaces, none as root refuses to start and names none-unsafe; auto with only the terminal's operator warns and runs", () => {
    const setup = {
      config: { ...workspace.config, TOOLHOST_BWRAP_PATH: "/nonexistent/bwrap" },
      layout: workspace.layout,
      agents: readAgentsFile(workspace.layout.agentsFile),
      cliEntry: CLI_ENTRY,
    };
    expect(() => prepareToolhostLaunches(setup)).toThrow(SandboxUnavailableError);
    expect(() => prepareToolhostLaunches(setup)).toThrow(/TOOLHOST_SANDBOX=none-unsafe/);
    expect(() => prepareToolhostLaunches({ ...setup, config: { ...setup.config, TOOLHOST_SANDBOX: "auto" } })).toThrow(
      /never runs an agent without them/,
    );
    const local = prepareToolhostLaunches({
      ...setup,
      config: { ...setup.config, TOOLHOST_SANDBOX: "auto" },
      localOperatorOnly: true,
    });
    expect(local.agents.get("a")).toMatchObject({ mode: "none", setting: "none-unsafe", jail: false });
    expect(local.warnings.join("\n")).toMatch(/only the operator at this terminal/);
    const unsafe = prepareToolhostLaunches({ ...setup, config: { ...setup.config, TOOLHOST_SANDBOX: "none-unsafe" } });
    expect(unsafe.agents.get("a")).toMatchObject({ mode: "none", setting: "none-unsafe", jail: false });
    expect(unsafe.warnings.join("\n")).toMatch(/share the host's \/tmp, \/proc and network/);
  });

  it("none as root runs the child in its jail, and each command in namespaces of its own", async () => {
    const launch = workspace.launches().agents.get("a");
    expect(launch).toMatchObject({ mode: "none", setting: "none", jail: true, startup: { commandNamespaces: true } });
    const a = realClient(workspace, "a").client;
    const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
    // A fresh pid namespace: its init (bubblewrap's) and the command's shell are its first pids.
    expect(text(await a.callTool({ name: "shell.exec", args: { command: "echo $$" }, cwd }))).toMatch(/^ok: [12]\n$/);
  });
});

describe.runIf(isRoot)("the cgroup join step", () => {
  it("a launch whose group cannot be joined stops before anything runs", async () => {
    const workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none-unsafe", TOOLHOST_UID_BASE: "48000" });
    const startup = workspace.launches().agents.get("a")!.startup;
    const marker = join(workspace.layout.agentTrees("a").workTree, "ran");
    const launch = planChildLaunch({
      startup,
      node: { execPath: "/usr/bin/touch", args: [marker] },
      codePaths: [],
      jail: false,
      cgroup: { procsFiles: ["/nonexistent/cgroup.procs"], dirs: [] },
    });
    const status = spawnSync(launch.file, launch.args, { env: launch.env, stdio: "pipe" }).status;
    expect(status).toBe(125);
    expect(existsSync(marker)).toBe(false);
    const joined = planChildLaunch({
      startup,
      node: { execPath: "/usr/bin/touch", args: [marker] },
      codePaths: [],
      jail: false,
      cgroup: { procsFiles: [], dirs: [] },
    });
    expect(spawnSync(joined.file, joined.args, { env: joined.env, stdio: "pipe" }).status).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });
});
