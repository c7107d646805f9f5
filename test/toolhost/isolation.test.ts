/**
 * The isolation outcomes of SANDBOX.md: agent A attacks, B is another agent. "Denied"
 * means a structured error and, by hashing B's trees and the shared trees before and
 * after every test, nothing outside A's trees was read or changed. The path-sandbox
 * cases run in both sandbox modes; the OS cases need bwrap (CI installs it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentUid } from "../../src/toolhost/sandbox/agent-identity.js";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { hashTree, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

// Its own uid range: the process limit and the "nothing survives" checks count every
// process of the uid, and other test files run agent "a" at the same time.
const UID_BASE = 42_000;
import { livePids, type makeClient } from "../helpers/toolhost.js";

// Exactly what the tests run: nothing (curl, node) is added to ALLOWED_COMMANDS behind the operator's back.
const ALLOWED = "ls,cat,echo,ln,sleep,yes,python3,mount,touch,id,grep,mkfifo,truncate,pwd,curl";
const isRoot = process.getuid?.() === 0;

function code(result: ToolResult): string {
  return result.ok ? "ok" : result.error.code;
}

for (const mode of ["bwrap", "none"] as const) {
  describe(`isolation with TOOLHOST_SANDBOX=${mode}`, () => {
    let workspace: RealWorkspace;
    let a: ReturnType<typeof makeClient>["client"];
    let b: ReturnType<typeof makeClient>["client"];
    let chatA: string;
    let bTrees: ReturnType<RealWorkspace["layout"]["agentTrees"]>;
    let protectedHash: () => string;
    let before: string;

    beforeAll(async () => {
      workspace = await realWorkspace({
        TOOLHOST_SANDBOX: mode,
        ALLOWED_COMMANDS: ALLOWED,
        TOOL_OUTPUT_MAX_BYTES: "8192",
        TOOLHOST_NPROC_LIMIT: "48",
        SHELL_TIMEOUT_MS: "5000",
        TOOLHOST_UID_BASE: String(UID_BASE),
      });
      const { layout } = workspace;
      bTrees = layout.agentTrees("b");
      chatA = join(layout.agentTrees("a").workTree, "chat");
      mkdirSync(chatA, { recursive: true });
      writeFileSync(join(bTrees.workTree, "secret.txt"), "B's secret\n");
      writeFileSync(join(bTrees.experienceDir, "2026-01-01-b.md"), "B's experience\n");
      writeFileSync(join(bTrees.privateDir, "token.txt"), "B's token\n");
      // Prefix confusion: siblings whose names start with A's id.
      for (const sibling of ["a_evil", "a.bak", "a1"]) {
        mkdirSync(join(layout.workRoot, sibling), { recursive: true });
        writeFileSync(join(layout.workRoot, sibling, "loot.txt"), "not A's\n");
      }
      protectedHash = () =>
        [
          bTrees.workTree,
          bTrees.experienceDir,
          bTrees.privateDir,
          layout.baseSkillsDir,
          join(layout.workRoot, "a_evil"),
          join(layout.workRoot, "a.bak"),
        ]
          .map(hashTree)
          .join(",");
      a = realClient(workspace, "a", { scope: "file", concurrency: 2 }).client;
      b = realClient(workspace, "b", { scope: "file" }).client;
    });

    afterEach(() => {
      expect(protectedHash(), "B's trees and the shared trees are unchanged").toBe(before);
    });

    const callA = (name: string, args: Record<string, unknown>) => a.callTool({ name, args, cwd: chatA });

    it("1. traversal, absolute paths into B, prefix confusion and NUL bytes are denied", async () => {
      before = protectedHash();
      const rel = (to: string) => join("..", "..", "..", to);
      for (const path of [
        rel("workspace/b/secret.txt"),
        join(bTrees.workTree, "secret.txt"),
        join(bTrees.privateDir, "token.txt"),
        join(workspace.layout.workRoot, "a_evil", "loot.txt"),
        join(workspace.layout.workRoot, "a.bak", "loot.txt"),
        join(workspace.layout.workRoot, "a1", "loot.txt"),
        "notes\0.txt",
        "/etc/shadow",
      ]) {
        expect(code(await callA("file.read", { path })), path).toBe("PATH_NOT_ALLOWED");
      }
      expect(code(await callA("file.write", { path: join(bTrees.workTree, "planted.txt"), content: "x" }))).toBe(
        "PATH_NOT_ALLOWED",
      );
      expect(code(await callA("file.list", { path: join(workspace.layout.workRoot, "a_evil") }))).toBe(
        "PATH_NOT_ALLOWED",
      );
    });

    it("2. a link made by A's shell into B or /etc is denied to the file tools", async () => {
      before = protectedHash();
      expect(
        code(
          await callA("shell.exec", {
            command: `ln -s ${join(bTrees.workTree, "secret.txt")} to-b && ln -s /etc to-etc`,
          }),
        ),
      ).toBe("ok");
      expect(code(await callA("file.read", { path: "to-b" }))).toBe("PATH_NOT_ALLOWED");
      expect(code(await callA("file.read", { path: "to-etc/hostname" }))).toBe("PATH_NOT_ALLOWED");
      expect(code(await callA("file.list", { path: "to-etc" }))).toBe("PATH_NOT_ALLOWED");
      if (mode === "bwrap") {
        const inside = await callA("shell.exec", { command: "cat to-b" });
        expect(inside).toMatchObject({
          ok: false,
          error: { code: "EXIT_NONZERO" },
          output: expect.stringMatching(/No such file or directory/),
        });
      }
    });

    it("3. a dangling link to a path in B, then file.write to it: denied, nothing appears in B", async () => {
      before = protectedHash();
      symlinkSync(join(bTrees.workTree, "created-through-link.txt"), join(chatA, "dangling"));
      expect(code(await callA("file.write", { path: "dangling", content: "x" }))).toBe("PATH_NOT_ALLOWED");
      expect(existsSync(join(bTrees.workTree, "created-through-link.txt"))).toBe(false);
    });

    it("4. a link in an ancestor folder, then a write with parent creation: denied", async () => {
      before = protectedHash();
      symlinkSync(bTrees.workTree, join(chatA, "ancestor"));
      expect(code(await callA("file.write", { path: "ancestor/deep/new/file.txt", content: "x" }))).toBe(
        "PATH_NOT_ALLOWED",
      );
      expect(existsSync(join(bTrees.workTree, "deep"))).toBe(false);
    });

    it("5. grep and glob over a tree holding a link to B return nothing from B", async () => {
      before = protectedHash();
      mkdirSync(join(chatA, "tree"), { recursive: true });
      writeFileSync(join(chatA, "tree", "mine.txt"), "secret of A\n");
      symlinkSync(bTrees.workTree, join(chatA, "tree", "b-link"));
      const grep = await callA("file.grep", { pattern: "secret", path: "tree" });
      expect(grep).toMatchObject({ ok: true, output: "mine.txt:1: secret of A" });
      const glob = await callA("file.glob", { pattern: "**/*.txt", path: "tree" });
      expect(glob).toMatchObject({ ok: true, output: "mine.txt" });
    });

    it("6. writes to the read-only base skills are denied", async () => {
      before = protectedHash();
      const skill = join(workspace.layout.baseSkillsDir, "skill-builder", "SKILL.md");
      expect(code(await callA("file.write", { path: skill, content: "pwned" }))).toBe("PATH_NOT_ALLOWED");
      expect(code(await callA("file.edit", { path: skill, old_string: "Skill builder", new_string: "x" }))).toBe(
        "PATH_NOT_ALLOWED",
      );
      expect(await callA("file.read", { path: skill })).toMatchObject({
        ok: true,
        output: expect.stringMatching(/^---\nname: skill-builder/),
      });
      if (mode === "bwrap") {
        expect(
          await callA("shell.exec", { command: `touch ${join(workspace.layout.baseSkillsDir, "x")}` }),
        ).toMatchObject({ ok: false, output: expect.stringMatching(/Read-only file system/) });
      }
    });

    it("7. huge reads are capped with a marker; device files and pipes are refused", async () => {
      before = protectedHash();
      execFileSync("truncate", ["-s", "3G", join(chatA, "huge.log")]);
      writeFileSync(join(chatA, "text.log"), "line\n".repeat(100_000));
      const heap = process.memoryUsage().rss;
      const text = await callA("file.read", { path: "text.log" });
      expect(text).toMatchObject({
        ok: true,
        truncated: true,
        output: expect.stringMatching(/…\[truncated at 8192 bytes of 500000; read on with offset\/limit\]$/),
      });
      expect(await callA("file.read", { path: "huge.log" })).toMatchObject({
        ok: true,
        output: expect.stringMatching(/binary file of 3221225472 bytes/),
      });
      expect(process.memoryUsage().rss - heap).toBeLessThan(64 * 1024 * 1024);
      execFileSync("mkfifo", [join(chatA, "pipe")]);
      expect(code(await callA("file.read", { path: "pipe" }))).toBe("INVALID_ARGS");
      expect(code(await callA("file.read", { path: "/dev/zero" }))).toBe("PATH_NOT_ALLOWED");
    });

    it("8. shell lists, substitutions and wrappers are refused; allowed reads of B still fail", async () => {
      before = protectedHash();
      expect(await callA("shell.exec", { command: `ls; od ${join(bTrees.workTree, "secret.txt")}` })).toMatchObject({
        ok: false,
        error: { code: "COMMAND_NOT_ALLOWED", reason: "od is not on ALLOWED_COMMANDS" },
      });
      expect(code(await callA("shell.exec", { command: "echo $(cat /etc/shadow)" }))).toBe("COMMAND_NOT_ALLOWED");
      expect(code(await callA("shell.exec", { command: "echo `cat /etc/shadow`" }))).toBe("COMMAND_NOT_ALLOWED");
      expect(code(await callA("shell.exec", { command: "sh -c 'cat /etc/shadow'" }))).toBe("COMMAND_NOT_ALLOWED");
      expect(code(await callA("shell.exec", { command: "echo x > /etc/laoding-pwned" }))).toBe("COMMAND_NOT_ALLOWED");
      if (mode === "bwrap") {
        expect(await callA("shell.exec", { command: `cat ${join(bTrees.workTree, "secret.txt")}` })).toMatchObject({
          ok: false,
          error: { code: "EXIT_NONZERO" },
          output: expect.stringMatching(/No such file or directory/),
        });
      }
    });

    it("10-12. huge output, sleepers and background survivors: capped, timed out, gone", async () => {
      before = protectedHash();
      const flood = await callA("shell.exec", { command: "yes" });
      expect(flood).toMatchObject({ ok: true, truncated: true, output: expect.stringMatching(/bytes truncated/) });
      expect(await callA("shell.exec", { command: "sleep 100000", timeout_ms: 300 })).toMatchObject({
        ok: false,
        error: { code: "TIMEOUT" },
      });
      // Inline code (python3 -c) is refused by the allowlist: scripts are written, then run.
      expect(
        code(
          await callA("file.write", {
            path: "escape.py",
            content: "import subprocess\nsubprocess.Popen(['sleep', '77.2'], start_new_session=True)\n",
          }),
        ),
      ).toBe("ok");
      const survivors = await callA("shell.exec", { command: "sleep 77.1 & python3 escape.py && echo started" });
      expect(survivors).toMatchObject({ ok: true, output: "started\n" });
      expect(livePids({ pattern: /sleep (77\.[12]|100000)/ })).toEqual([]);
    });

    if (mode === "bwrap") {
      it("9. a fork bomb is bounded and nothing survives the call", async () => {
        before = protectedHash();
        const script =
          "import os, time\nfor i in range(100000):\n    try:\n        if os.fork() == 0:\n            time.sleep(60); os._exit(0)\n    except OSError as error:\n        print('EAGAIN', error.errno, 'after', i); break\n";
        expect(code(await callA("file.write", { path: "bomb.py", content: script }))).toBe("ok");
        const bomb = await callA("shell.exec", { command: "python3 bomb.py", timeout_ms: 10_000 });
        // Bounded either way, whichever comes first on a busy machine: the uid's process limit
        // stops the forks (EAGAIN), or the call is killed for holding more than its share.
        if (isRoot)
          expect(bomb.ok ? bomb.output : bomb.error.reason).toMatch(
            /^EAGAIN 11 after \d+|more processes than one call may hold/,
          );
        expect(await callA("shell.exec", { command: "echo still responsive" })).toMatchObject({
          ok: true,
          output: "still responsive\n",
        });
        // The toolhost child (and, under tsx, its esbuild service) runs as the agent's uid; nothing else may be left.
        if (isRoot)
          expect(
            livePids({ uid: agentUid("a", UID_BASE) }).filter(
              (pid) => !livePids({ pattern: /child-entry|esbuild --service/ }).includes(pid),
            ),
          ).toEqual([]);
      });

      it("13. no capabilities, no mounts, no host secrets, only A's trees, no network", async () => {
        before = protectedHash();
        const status = await callA("shell.exec", { command: "grep Cap /proc/self/status" });
        expect(status.ok && status.output.match(/Cap(Inh|Prm|Eff|Bnd|Amb):\s+0{16}/g)).toHaveLength(5);
        expect(code(await callA("shell.exec", { command: "mount -o remount,rw /" }))).toBe("EXIT_NONZERO");
        expect(await callA("shell.exec", { command: "cat /etc/shadow" })).toMatchObject({
          ok: false,
          output: expect.stringMatching(/No such file/),
        });
        expect(await callA("shell.exec", { command: "ls /root" })).toMatchObject({
          ok: false,
          output: expect.stringMatching(/No such file/),
        });
        const parent = await callA("shell.exec", { command: `ls ${workspace.layout.workRoot}` });
        expect(parent).toMatchObject({ ok: true, output: "a\n" });
        const shareParent = await callA("shell.exec", {
          command: `ls ${workspace.layout.agentsPrivateRoot} ${workspace.layout.experienceRoot}`,
        });
        expect(shareParent.ok && shareParent.output).not.toMatch(/\bb\b/);
        const environment = await callA("shell.exec", { command: "cat /proc/self/environ" });
        expect(environment.ok).toBe(true);
        if (environment.ok) {
          expect(environment.output).not.toMatch(/secret|sk-|TOKEN|LLM_|TELEGRAM|FEISHU|ADMIN/i);
        }
        if (isRoot)
          expect(await callA("shell.exec", { command: "id -u" })).toMatchObject({
            ok: true,
            output: `${agentUid("a", UID_BASE)}\n`,
          });
        const server = await listen();
        try {
          const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
          const curl = await callA("shell.exec", { command: `curl -sS -m 2 ${url}` });
          // The server is up on the host's loopback; only the sandbox's own network namespace hides it.
          expect(curl).toMatchObject({ ok: false, output: expect.stringMatching(/curl: \(7\)/) });
        } finally {
          server.close();
        }
      });

      it("a session folder created on first use belongs to the agent: its shell can write there, and the library link resolves", async () => {
        before = protectedHash();
        const fresh = join(workspace.layout.agentTrees("a").workTree, "telegram-new-chat");
        const wrote = await a.callTool({
          name: "shell.exec",
          args: { command: "touch made-by-shell && ls -A" },
          cwd: fresh,
        });
        expect(wrote).toMatchObject({ ok: true, output: "made-by-shell\n团队经验\n" });
        expect(
          await a.callTool({
            name: "file.write",
            args: { path: "团队经验/2026-11-30-note.md", content: "# note" },
            cwd: fresh,
          }),
        ).toMatchObject({ ok: true });
        expect(
          await a.callTool({ name: "shell.exec", args: { command: "cat 团队经验/2026-11-30-note.md" }, cwd: fresh }),
        ).toMatchObject({ ok: true, output: "# note" });
      });

      it("14. A and B running at once each see only their own trees", async () => {
        before = protectedHash();
        const [fromA, fromB] = await Promise.all([
          a.callTool({ name: "shell.exec", args: { command: `ls ${workspace.layout.workRoot}` }, cwd: chatA }),
          b.callTool({ name: "shell.exec", args: { command: `ls ${workspace.layout.workRoot}` } }),
        ]);
        expect(fromA).toMatchObject({ ok: true, output: "a\n" });
        expect(fromB).toMatchObject({ ok: true, output: "b\n" });
        expect(await b.callTool({ name: "file.read", args: { path: join(chatA, "huge.log") } })).toMatchObject({
          ok: false,
          error: { code: "PATH_NOT_ALLOWED" },
        });
      });
    }
  });
}

describe("the sandbox is reported and required", () => {
  let workspace: RealWorkspace;
  beforeAll(async () => {
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "bwrap" });
  });

  it("ping reports bwrap when it is in effect", async () => {
    expect(await realClient(workspace, "a").client.ping()).toMatchObject({ sandbox: "bwrap" });
  });
});

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((_request, response) => response.end("reachable"));
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
