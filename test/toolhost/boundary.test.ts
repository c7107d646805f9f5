/**
 * Issue 8's findings as regression tests: what an attacker holding agent A's chat could
 * do before the toolhost child ran with A's authority only.
 */
import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentUid } from "../../src/toolhost/sandbox/agent-identity.js";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { CLI_ENTRY, realClient, realWorkspace } from "../helpers/real-toolhost.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { makeClient } from "../helpers/toolhost.js";

const isRoot = process.getuid?.() === 0;
const MODES = ["bwrap", "none", "none-unsafe"] as const;
/** none-unsafe finds a command's leftovers by uid: its own uid range, apart from other files' agent "a". */
const ownUids = (mode: (typeof MODES)[number]): Record<string, string> =>
  mode === "none-unsafe" ? { TOOLHOST_UID_BASE: "41000" } : {};

function output(result: ToolResult): string {
  return `${result.ok ? "ok" : result.error.code}: ${result.output ?? ""}`;
}

describe.runIf(isRoot)("none-unsafe mode as root still isolates agents by uid (finding 2)", () => {
  it("the shell cannot read the bot's environment, the database or B's trees, cannot signal the bot, and is process-limited", async () => {
    // Its own uid range: the fork bomb fills this uid's process limit, which other test
    // files running at the same time with agent "a" must not share.
    const workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none-unsafe",
      ALLOWED_COMMANDS: "cat,ls,kill,python3,id",
      TOOLHOST_NPROC_LIMIT: "64",
      TOOLHOST_UID_BASE: "40000",
    });
    const { layout } = workspace;
    writeFileSync(layout.databaseFile, "SQLite format 3\0 pretend\n");
    writeFileSync(join(layout.agentTrees("b").workTree, "secret.txt"), "B's secret\n");
    const { client } = realClient(workspace, "a");
    const cwd = join(layout.agentTrees("a").workTree, "chat");
    const shell = (command: string) => client.callTool({ name: "shell.exec", args: { command }, cwd });
    expect(await shell("id -u")).toMatchObject({ ok: true, output: `${agentUid("a", 40_000)}\n` });
    expect(output(await shell(`cat /proc/${process.pid}/environ`))).toMatch(/^EXIT_NONZERO: .*Permission denied/);
    expect(output(await shell(`cat ${layout.databaseFile}`))).toMatch(/^EXIT_NONZERO: .*Permission denied/);
    expect(output(await shell(`ls ${layout.dataDir} ${layout.configsDir}`))).toMatch(
      /^EXIT_NONZERO: .*Permission denied/,
    );
    expect(output(await shell(`cat ${join(layout.agentTrees("b").workTree, "secret.txt")}`))).toMatch(
      /^EXIT_NONZERO: .*Permission denied/,
    );
    expect(output(await shell(`ls ${layout.agentTrees("b").experienceDir}`))).toMatch(
      /^EXIT_NONZERO: .*Permission denied/,
    );
    expect(output(await shell(`kill -0 ${process.pid}`))).toMatch(/^EXIT_NONZERO: .*Operation not permitted/);
    // The workspace root and the share root can be passed through, not listed.
    expect(output(await shell(`ls ${layout.workspaceDir}`))).toMatch(/^EXIT_NONZERO: .*Permission denied/);
    expect(output(await shell(`ls ${layout.experienceRoot}`))).toMatch(/^EXIT_NONZERO: .*Permission denied/);
    // The host's /tmp is shared in none-unsafe mode, but what an agent leaves there is its own (umask 077).
    const left = `/tmp/laoding-a-left-${process.pid}.txt`;
    expect(
      await shell(`python3 ${writeScript(cwd, "leave.py", `open("${left}", "w").write("A's scratch")\n`)}`),
    ).toMatchObject({ ok: true });
    const b = realClient(workspace, "b").client;
    const bCwd = join(layout.agentTrees("b").workTree, "chat");
    expect(output(await b.callTool({ name: "shell.exec", args: { command: `cat ${left}` }, cwd: bCwd }))).toMatch(
      /^EXIT_NONZERO: .*Permission denied/,
    );
    rmSync(left, { force: true });
    const bomb = await shell(
      `python3 ${writeScript(cwd, "bomb.py", "import os, time\nfor i in range(10000):\n    try:\n        if os.fork() == 0:\n            time.sleep(30); os._exit(0)\n    except OSError as error:\n        print('EAGAIN', error.errno); break\n")}`,
    );
    // Bounded either way, whichever comes first: EAGAIN at the uid's limit, or killed for holding more than one call's share.
    expect(bomb.ok ? bomb.output : bomb.error.reason).toMatch(/^EAGAIN 11\n$|more processes than one call may hold/);
  });
});

function writeScript(dir: string, name: string, text: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), text, { mode: 0o644 });
  return join(dir, name);
}

describe("nothing above fd 2 reaches the child or its commands (finding 3)", () => {
  for (const mode of MODES) {
    it(`${mode}: a descriptor the bot inherited is closed before the toolhost and every command start`, async () => {
      const workspace = await realWorkspace({
        TOOLHOST_SANDBOX: mode,
        ...ownUids(mode),
        ALLOWED_COMMANDS: "ls,python3",
      });
      const canary = join(tempDir("laoding-fd-"), "inherited.log");
      writeFileSync(canary, "");
      chmodSync(dirname(canary), 0o777);
      chmodSync(canary, 0o666);
      const fd = openSync(canary, "a");
      // `laoding toolhost --agent a` by hand, started the way a shell script with `exec 251>>file` would.
      const stdio: ("pipe" | "inherit" | "ignore" | number)[] = [
        "pipe",
        "pipe",
        "inherit",
        ...new Array<"ignore">(248).fill("ignore"),
        fd,
      ];
      const { client } = makeClient({
        startTimeoutMs: 20_000,
        spawn: () =>
          spawn(
            process.execPath,
            [
              "--import",
              import.meta.resolve("tsx"),
              CLI_ENTRY,
              "toolhost",
              "--agent",
              "a",
              "--workspace",
              workspace.workspaceDir,
            ],
            {
              cwd: REAL_REPO_ROOT,
              env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn" },
              stdio,
              detached: true,
            },
          ),
      });
      closeSync(fd);
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
      const fds = await client.callTool({ name: "shell.exec", args: { command: "ls /proc/self/fd" }, cwd });
      // ls's own directory descriptor is the only one above 2.
      expect(fds).toMatchObject({ ok: true, output: "0\n1\n2\n3\n" });
      const script = writeScript(
        cwd,
        "fd.py",
        "import os\ntry:\n    os.write(251, b'pwned')\n    print('wrote')\nexcept OSError as error:\n    print(error.strerror)\n",
      );
      if (isRoot) chmodSync(cwd, 0o755);
      expect(await client.callTool({ name: "shell.exec", args: { command: `python3 ${script}` }, cwd })).toMatchObject({
        ok: true,
        output: "Bad file descriptor\n",
      });
      expect(readFileSync(canary, "utf8")).toBe("");
      await client.supervisor.stop();
    });
  }
});

describe("a memory limit per shell command (finding 7)", () => {
  for (const mode of MODES) {
    it(`${mode}: a command allocating past TOOLHOST_MEMORY_LIMIT_MB fails; a modest one runs`, async () => {
      const workspace = await realWorkspace({
        TOOLHOST_SANDBOX: mode,
        ...ownUids(mode),
        ALLOWED_COMMANDS: "python3",
        TOOLHOST_MEMORY_LIMIT_MB: "256",
      });
      const { client } = realClient(workspace, "a");
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
      const script = writeScript(
        cwd,
        "alloc.py",
        "import sys\ntry:\n    block = bytearray(int(sys.argv[1]) * 1024 * 1024)\n    print('allocated', len(block) >> 20)\nexcept MemoryError:\n    print('MemoryError'); sys.exit(3)\n",
      );
      if (isRoot) chmodSync(cwd, 0o755);
      expect(
        await client.callTool({ name: "shell.exec", args: { command: `python3 ${script} 64` }, cwd }),
      ).toMatchObject({ ok: true, output: "allocated 64\n" });
      expect(
        await client.callTool({ name: "shell.exec", args: { command: `python3 ${script} 3072` }, cwd }),
      ).toMatchObject({ ok: false, error: { code: "EXIT_NONZERO" }, output: "MemoryError\n" });
    });
  }
});

describe.runIf(isRoot)("a workspace under a mode-700 folder (finding 8)", () => {
  for (const mode of ["bwrap", "auto", "none"] as const) {
    it(`${mode}: the agent's tools work, as its own uid`, async () => {
      const workspace = await realWorkspace({ TOOLHOST_SANDBOX: mode, ALLOWED_COMMANDS: "id,ls" });
      chmodSync(dirname(workspace.workspaceDir), 0o700);
      const { client } = realClient(workspace, "a");
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
      expect(await client.ping()).toMatchObject({ sandbox: mode === "none" ? "none" : "bwrap" });
      expect(
        await client.callTool({ name: "file.write", args: { path: "note.md", content: "hi" }, cwd }),
      ).toMatchObject({ ok: true });
      expect(await client.callTool({ name: "shell.exec", args: { command: "id -u && ls" }, cwd })).toMatchObject({
        ok: true,
        output: `${agentUid("a", 20_000)}\nnote.md\n团队经验\n`,
      });
    });
  }
});
