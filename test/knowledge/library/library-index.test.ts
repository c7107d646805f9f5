import { spawn } from "node:child_process";
import {
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  mkdirSync,
  symlinkSync,
  readdirSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseLibraryDoc } from "../../../src/knowledge/library/library-doc.js";
import {
  ensureFresh,
  INDEX_HEADERS,
  indexedFiles,
  rebuildIndex,
} from "../../../src/knowledge/library/library-index.js";
import { REAL_REPO_ROOT, tempDir } from "../../helpers/temp-dir.js";

const zh = { locale: "zh" } as const;
const MYSQL = `---
title: MySQL 死锁排查实录
keywords: mysql, 死锁, innodb, 锁等待
summary: 三步定位:锁等待图 -> 事务回滚顺序 -> 索引缺失加锁放大
applicable: MySQL 8 / backend
last_verified: 2026-10-24
---
body...
`;

function library(docs: Record<string, string>): string {
  const dir = tempDir("laoding-lib-");
  for (const [name, text] of Object.entries(docs)) writeFileSync(join(dir, name), text);
  return dir;
}

const index = (dir: string) => readFileSync(join(dir, "INDEX.md"), "utf8");

/** Moves a file's mtime into the past, so the index written next is clearly newer. */
function age(path: string, seconds = 60): void {
  const past = new Date(Date.now() - seconds * 1000);
  utimesSync(path, past, past);
}

describe("INDEX.md generation", () => {
  it("an empty library gets a header and a zero count", () => {
    const dir = library({});
    expect(ensureFresh(dir, zh)).toEqual({ regenerated: true, count: 0, reason: "missing" });
    expect(index(dir)).toBe(`${INDEX_HEADERS.zh}\n<!-- count: 0 -->\n`);
  });

  it("one line per document, newest file name first, in the documented shape", () => {
    const dir = library({
      "2026-10-24-mysql-deadlock.md": MYSQL,
      "2026-10-20-feishu-card-rollback.md":
        "---\ntitle: 飞书卡片回滚\nkeywords: [飞书, 卡片, 回滚]\nsummary: 先撤回再重发\nlast_verified: 2026-10-20\n---\n",
      "2026-11-01-no-frontmatter.md": "just text, no fences\n",
      "notes.md": "not a document name",
      "2026-10-21-has space.md": "not a document name either",
    });
    mkdirSync(join(dir, "2026-10-22-a-folder.md"));
    symlinkSync(join(dir, "2026-10-24-mysql-deadlock.md"), join(dir, "2026-10-23-a-link.md"));
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, count: 3 });
    expect(index(dir)).toBe(
      [
        INDEX_HEADERS.zh,
        "<!-- count: 3 -->",
        "- 2026-11-01-no-frontmatter.md | 2026-11-01-no-frontmatter | - | - | 验证 -",
        "- 2026-10-24-mysql-deadlock.md | MySQL 死锁排查实录 | mysql,死锁,innodb,锁等待 | 三步定位:锁等待图 -> 事务回滚顺序 -> 索引缺失加锁放大 | 验证 2026-10-24",
        "- 2026-10-20-feishu-card-rollback.md | 飞书卡片回滚 | 飞书,卡片,回滚 | 先撤回再重发 | 验证 2026-10-20",
        "",
      ].join("\n"),
    );
  });

  it("missing and malformed frontmatter never break anything: the file name stands in", () => {
    const dir = library({
      "2026-01-01-unclosed.md": "---\ntitle: never closed\nkeywords: a, b\n\nbody",
      "2026-01-02-garbage.md": "---\n: : :\n[[[\ntitle\n---\nbody",
      "2026-01-03-huge.md": `---\ntitle: huge\nsummary: ${"x".repeat(20_000)}\n---\n`,
      "2026-01-04-empty.md": "",
      "2026-01-05-binary.md": Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString("latin1"),
    });
    expect(ensureFresh(dir, zh).count).toBe(5);
    const lines = index(dir).split("\n").slice(2, -1);
    expect(lines).toEqual([
      "- 2026-01-05-binary.md | 2026-01-05-binary | - | - | 验证 -",
      "- 2026-01-04-empty.md | 2026-01-04-empty | - | - | 验证 -",
      "- 2026-01-03-huge.md | 2026-01-03-huge | - | - | 验证 -",
      "- 2026-01-02-garbage.md | 2026-01-02-garbage | - | - | 验证 -",
      "- 2026-01-01-unclosed.md | 2026-01-01-unclosed | - | - | 验证 -",
    ]);
  });

  it("pipes and newlines inside fields are neutralised: one document is one line", () => {
    const dir = library({
      "2026-02-02-pipes.md":
        '---\ntitle: "a | b\\nc"\nkeywords: x|y, 中文 关键词\nsummary: >\n  first line\n  second | line\n---\n',
    });
    ensureFresh(dir, zh);
    const lines = index(dir).split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe("- 2026-02-02-pipes.md | a ｜ b c | x｜y,中文 关键词 | first line second ｜ line | 验证 -");
    expect(indexedFiles(index(dir))).toEqual(["2026-02-02-pipes.md"]);
  });

  it("a long summary is clipped with an ellipsis", () => {
    const entry = parseLibraryDoc("2026-03-03-long.md", `---\nsummary: ${"长".repeat(300)}\n---\n`);
    expect(entry.summary).toHaveLength(300);
    const dir = library({ "2026-03-03-long.md": `---\nsummary: ${"长".repeat(300)}\n---\n` });
    ensureFresh(dir, zh);
    const summary = index(dir).split("\n")[2]?.split(" | ")[3] ?? "";
    expect([...summary]).toHaveLength(160);
    expect(summary.endsWith("…")).toBe(true);
  });

  it("an English header with BOT_LOCALE=en, and a locale change regenerates", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    age(join(dir, "2026-10-24-mysql-deadlock.md"));
    ensureFresh(dir, { locale: "en" });
    expect(index(dir)).toContain(
      "# Team experience index (generated automatically, do not edit; grep this file to search)\n<!-- count: 1 -->\n",
    );
    expect(index(dir)).toContain("| verified 2026-10-24");
    expect(ensureFresh(dir, { locale: "en" }).regenerated).toBe(false);
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, reason: "header-changed" });
  });
});

describe("ensureFresh", () => {
  it("leaves an up-to-date index alone", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    age(join(dir, "2026-10-24-mysql-deadlock.md"));
    ensureFresh(dir, zh);
    const before = statSync(join(dir, "INDEX.md")).mtimeMs;
    expect(ensureFresh(dir, zh)).toEqual({ regenerated: false, count: 1 });
    expect(statSync(join(dir, "INDEX.md")).mtimeMs).toBe(before);
  });

  it("regenerates when a document is newer than the index", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    age(join(dir, "2026-10-24-mysql-deadlock.md"));
    ensureFresh(dir, zh);
    age(join(dir, "INDEX.md"), 30);
    writeFileSync(
      join(dir, "2026-10-24-mysql-deadlock.md"),
      MYSQL.replace("MySQL 死锁排查实录", "MySQL 死锁排查(修订)"),
    );
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, reason: "document-newer" });
    expect(index(dir)).toContain("MySQL 死锁排查(修订)");
  });

  it("a deleted document leaves the index, even when every remaining one is older", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL, "2026-10-25-other.md": "---\ntitle: other\n---\n" });
    for (const name of readdirSync(dir)) age(join(dir, name));
    ensureFresh(dir, zh);
    rmSync(join(dir, "2026-10-25-other.md"));
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, count: 1, reason: "documents-changed" });
    expect(indexedFiles(index(dir))).toEqual(["2026-10-24-mysql-deadlock.md"]);
  });

  it("a new document with an old mtime (copied with cp -p) still enters the index", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    age(join(dir, "2026-10-24-mysql-deadlock.md"));
    ensureFresh(dir, zh);
    writeFileSync(join(dir, "2025-01-01-old.md"), "---\ntitle: old\n---\n");
    age(join(dir, "2025-01-01-old.md"), 3600);
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, count: 2, reason: "documents-changed" });
  });

  it("a hand-deleted INDEX.md comes back", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    ensureFresh(dir, zh);
    rmSync(join(dir, "INDEX.md"));
    expect(ensureFresh(dir, zh)).toMatchObject({ regenerated: true, reason: "missing" });
  });

  it("rebuild always rewrites; no temp file is left behind", () => {
    const dir = library({ "2026-10-24-mysql-deadlock.md": MYSQL });
    ensureFresh(dir, zh);
    expect(rebuildIndex(dir, zh)).toEqual({ regenerated: true, count: 1, reason: "rebuild" });
    expect(readdirSync(dir).sort()).toEqual(["2026-10-24-mysql-deadlock.md", "INDEX.md"]);
  });
});

describe("concurrent regeneration", () => {
  it("four processes rebuilding at once never leave a torn or half-written index", async () => {
    const docs: Record<string, string> = {};
    // Large enough that a write takes several syscalls' worth of time.
    for (let index = 0; index < 300; index += 1)
      docs[`2026-05-${String((index % 28) + 1).padStart(2, "0")}-doc-${index}.md`] =
        `---\ntitle: 文档 ${index}\nkeywords: k${index}, 关键词\nsummary: ${"摘要".repeat(40)}\n---\n`;
    const dir = library(docs);
    ensureFresh(dir, zh);
    const writers = Array.from(
      { length: 4 },
      () =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              "--import",
              import.meta.resolve("tsx"),
              join(REAL_REPO_ROOT, "test/fixtures/library/regenerate-loop.ts"),
              dir,
              "15",
            ],
            { stdio: ["ignore", "ignore", "inherit"] },
          );
          child.on("error", reject);
          child.on("exit", (code) => resolve(code ?? -1));
        }),
    );
    let done = false;
    const finished = Promise.all(writers).finally(() => {
      done = true;
    });
    let reads = 0;
    while (!done) {
      const text = index(dir);
      const lines = text.split("\n");
      expect([INDEX_HEADERS.zh, INDEX_HEADERS.en]).toContain(lines[0]);
      expect(lines[1]).toBe("<!-- count: 300 -->");
      expect(lines).toHaveLength(303);
      expect(lines.at(-1)).toBe("");
      reads += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await finished).toEqual([0, 0, 0, 0]);
    expect(reads).toBeGreaterThan(0);
    expect(readdirSync(dir).filter((name) => name.includes(".tmp-"))).toEqual([]);
  }, 60_000);
});
