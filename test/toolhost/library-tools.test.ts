/**
 * The experience library through the real toolhost child, in both sandbox modes: writes
 * into the library refresh its index at once, library.search finds Chinese and English
 * queries (and documents changed behind the child's back), never returns another agent's
 * documents, and a rebuild of a large library leaves the child answering other calls.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ToolResult } from "../../src/toolhost/protocol.js";
import { giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const MYSQL = `---
title: MySQL 死锁排查实录
keywords: mysql, 死锁, innodb, 锁等待
summary: 三步定位:锁等待图 -> 事务回滚顺序 -> 索引缺失加锁放大
last_verified: 2026-10-24
---
body...
`;

function output(result: ToolResult): string {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.reason}`);
  return result.output;
}

for (const mode of ["none", "bwrap"] as const) {
  describe(`experience library tools with TOOLHOST_SANDBOX=${mode}`, () => {
    let workspace: RealWorkspace;
    beforeAll(async () => {
      workspace = await realWorkspace({
        TOOLHOST_SANDBOX: mode,
        ALLOWED_COMMANDS: "ls,cat,echo,grep,rm",
        BOT_LOCALE: "zh",
      });
    });

    it("a doc written through the link is in INDEX.md when file.write returns; an edit updates it", async () => {
      const { client } = realClient(workspace, "a");
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat-write");
      const library = workspace.layout.agentTrees("a").experienceDir;
      const written = output(
        await client.callTool({
          name: "file.write",
          args: { path: "团队经验/2026-10-24-mysql-deadlock.md", content: MYSQL },
          cwd,
        }),
      );
      expect(written).toMatch(
        /^created 团队经验\/2026-10-24-mysql-deadlock\.md \(\d+ bytes\); library index updated \(\d+ documents\)$/,
      );
      expect(readFileSync(join(library, "INDEX.md"), "utf8")).toContain(
        "- 2026-10-24-mysql-deadlock.md | MySQL 死锁排查实录 | mysql,死锁,innodb,锁等待 |",
      );
      output(
        await client.callTool({
          name: "file.edit",
          args: {
            path: "团队经验/2026-10-24-mysql-deadlock.md",
            old_string: "MySQL 死锁排查实录",
            new_string: "MySQL 死锁排查(第二版)",
          },
          cwd,
        }),
      );
      expect(readFileSync(join(library, "INDEX.md"), "utf8")).toContain("| MySQL 死锁排查(第二版) |");
      // A write outside the library leaves the result as it was.
      expect(output(await client.callTool({ name: "file.write", args: { path: "notes.md", content: "x" }, cwd }))).toBe(
        "created notes.md (1 bytes)",
      );
    });

    it("a hand edit of INDEX.md is replaced by a rebuild", async () => {
      const { client } = realClient(workspace, "a");
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat-hand");
      const result = output(
        await client.callTool({
          name: "file.write",
          args: { path: "团队经验/INDEX.md", content: "hand written\n" },
          cwd,
        }),
      );
      expect(result).toContain("INDEX.md is generated: your edit was replaced by a rebuild");
      expect(readFileSync(join(workspace.layout.agentTrees("a").experienceDir, "INDEX.md"), "utf8")).toMatch(
        /^# 团队经验索引/,
      );
    });

    it("library.search finds two-character Chinese and English queries, ranked; a shell-made doc heals at the search", async () => {
      const { client } = realClient(workspace, "a");
      const library = workspace.layout.agentTrees("a").experienceDir;
      // Written behind the toolhost's back (as through the shell): the next trigger indexes it.
      const planted = join(library, "2026-10-20-feishu-card-rollback.md");
      writeFileSync(
        planted,
        "---\ntitle: 飞书卡片回滚\nkeywords: 飞书, 卡片, 回滚, deadlock-free\nsummary: 先撤回再重发\n---\n",
      );
      giveToAgent(workspace, "a", planted);
      const chinese = output(await client.callTool({ name: "library.search", args: { query: "死锁" } }));
      expect(
        chinese
          .split("\n")
          .slice(1)
          .map((line) => line.split(" | ")[0]),
      ).toEqual(["- 2026-10-24-mysql-deadlock.md"]);
      const english = output(
        await client.callTool({ name: "library.search", args: { query: "MySQL deadlock", limit: 5 } }),
      );
      expect(
        english
          .split("\n")
          .slice(1)
          .map((line) => line.split(" | ")[0]),
      ).toEqual(["- 2026-10-24-mysql-deadlock.md", "- 2026-10-20-feishu-card-rollback.md"]);
      expect(output(await client.callTool({ name: "library.search", args: { query: "飞书" } }))).toContain(
        "2026-10-20-feishu-card-rollback.md",
      );
      // Changed in place behind its back (no new name, the folder's mtime unchanged): the next search knows.
      writeFileSync(
        planted,
        "---\ntitle: 飞书卡片撤回\nkeywords: 飞书, 撤回, deadlock-free\nsummary: 先撤回再重发\n---\n",
      );
      expect(output(await client.callTool({ name: "library.search", args: { query: "撤回" } }))).toContain(
        "- 2026-10-20-feishu-card-rollback.md | 飞书卡片撤回 |",
      );
      expect(output(await client.callTool({ name: "library.search", args: { query: "kubernetes" } }))).toMatch(
        /^no document matches "kubernetes" \(2 documents in /,
      );
      expect(await client.callTool({ name: "library.search", args: { query: "" } })).toMatchObject({
        ok: false,
        error: { code: "INVALID_ARGS" },
      });
    });

    it("library.index refreshes or rebuilds and reports the count", async () => {
      const { client } = realClient(workspace, "a");
      // The search before may have left INDEX.md's rewrite to the background: done, or awaited here.
      expect(output(await client.callTool({ name: "library.index", args: {} }))).toMatch(
        /INDEX\.md (is up to date|regenerated \((document-newer|documents-changed)\)): 2 documents$/,
      );
      expect(output(await client.callTool({ name: "library.index", args: { rebuild: true } }))).toMatch(
        /INDEX\.md regenerated \(rebuild\): 2 documents$/,
      );
    });

    it("the agent deleting its session folder (rm -rf through the shell) leaves the library as it was", async () => {
      const { client } = realClient(workspace, "a");
      const library = workspace.layout.agentTrees("a").experienceDir;
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat-doomed");
      output(await client.callTool({ name: "file.write", args: { path: "scratch.txt", content: "x" }, cwd }));
      const before = readdirSync(library).sort();
      output(await client.callTool({ name: "shell.exec", args: { command: `rm -rf ${cwd}` } }));
      expect(existsSync(cwd)).toBe(false);
      expect(readdirSync(library).sort()).toEqual(before);
      expect(before).toContain("2026-10-24-mysql-deadlock.md");
    });

    it("never crosses agents: b searches its own library only, and cannot read a's", async () => {
      const { client } = realClient(workspace, "b");
      expect(output(await client.callTool({ name: "library.search", args: { query: "死锁" } }))).toMatch(
        /^no document matches "死锁" \(0 documents in .*agent-experience\/b\/INDEX\.md\)$/,
      );
      const aLibrary = workspace.layout.agentTrees("a").experienceDir;
      const read = await client.callTool({ name: "file.read", args: { path: join(aLibrary, "INDEX.md") } });
      expect(read.ok ? "ok" : read.error.code).toBe("PATH_NOT_ALLOWED");
      const grep = await client.callTool({ name: "shell.exec", args: { command: `grep -r 死锁 ${aLibrary}` } });
      expect(grep.ok).toBe(false);
    });

    it("while library.index rebuilds 4,000 documents, the child answers other calls", async () => {
      const { client } = realClient(workspace, "a");
      const library = workspace.layout.agentTrees("a").experienceDir;
      for (let index = 0; index < 4000; index += 1)
        writeFileSync(
          join(library, `2025-03-${String((index % 28) + 1).padStart(2, "0")}-bulk-${index}.md`),
          `---\ntitle: 批量 ${index}\nkeywords: bulk, 批量\nsummary: document ${index}\n---\nbody\n`,
        );
      giveToAgent(workspace, "a", library);
      const cwd = join(workspace.layout.agentTrees("a").workTree, "chat-busy");
      output(await client.callTool({ name: "file.write", args: { path: "probe.txt", content: "probe" }, cwd }));
      output(await client.callTool({ name: "library.search", args: { query: "批量" } }));
      let rebuilt = false;
      const rebuild = client.callTool({ name: "library.index", args: { rebuild: true } }).then((result) => {
        rebuilt = true;
        return result;
      });
      // One read after another while the rebuild runs: with a rebuild that held the thread
      // throughout, none sent after it began could be answered before it.
      let answeredMeanwhile = 0;
      while (!rebuilt) {
        expect(output(await client.callTool({ name: "file.read", args: { path: "probe.txt" }, cwd }))).toContain(
          "probe",
        );
        if (!rebuilt) answeredMeanwhile += 1;
      }
      expect(output(await rebuild)).toMatch(/INDEX\.md regenerated \(rebuild\): 4002 documents$/);
      expect(answeredMeanwhile).toBeGreaterThanOrEqual(3);
    }, 120_000);
  });
}
