/**
 * A generated experience library for the search comparisons: Chinese and English documents
 * (and mixed ones, odd characters, missing and malformed frontmatter), changed step by
 * step with edits in place and by rename, body-only edits, deletions, renames, links and
 * folders that only look like documents. Seeded, so a failure replays.
 */
import { appendFileSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLibraryDoc } from "../../../src/knowledge/library/library-doc.js";
import { listLibraryDocs, readHead, renderIndex } from "../../../src/knowledge/library/library-index.js";

/** The queries of bench/library-bench.ts. */
export const BENCH_QUERIES = [
  "死锁",
  "deadlock",
  "飞书卡片",
  "rollback",
  "缓存",
  "nginx 502",
  "幂等",
  "kubernetes",
  "降噪",
  "不存在的主题",
];

const CHINESE = [
  "死锁",
  "排查",
  "飞书",
  "卡片",
  "回滚",
  "缓存",
  "击穿",
  "幂等",
  "支付",
  "回调",
  "告警",
  "降噪",
  "日志",
  "采样",
  "灰度",
  "发布",
  "镜像",
  "瘦身",
  "锁等待",
  "索引缺失",
  "滚动发布",
  "实录",
];
const ENGLISH = [
  "mysql",
  "MySQL",
  "deadlock",
  "kubernetes",
  "rollout",
  "redis",
  "nginx",
  "502",
  "docker",
  "image",
  "payment",
  "callback",
  "idempotent",
  "alert",
  "noise",
  "sampling",
  "canary",
  "rollback",
  "The",
  "Index",
  "lock",
  "case-12",
  "v2.3",
];
const ODD = ["|", "a | b", "-", ",", "😀", "İstanbul", "C++", "x_y", "  ", "、", "；"];
const SLUG_WORDS = ["mysql", "死锁", "feishu", "卡片", "redis", "缓存", "nginx", "幂等", "deploy", "日志", "a", "x1"];

/** Queries beyond the bench's: single characters, stop words, substrings, odd characters, mixed. */
export const EXTRA_QUERIES = [
  "锁",
  "5",
  "-",
  "a",
  "the",
  "the the",
  "的",
  "我的 死锁",
  "MySQL 死锁",
  "dead",
  "ock",
  "a | b",
  "😀",
  "İstanbul",
  "c++",
  "case-12",
  "v2.3",
  "滚动",
  "锁等待 索引",
  "rollout canary",
  "2026",
  "md",
  "实录 deadlock rollback",
  "x_y",
];

/** mulberry32: a small seeded generator. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

export class Corpus {
  private serial = 0;

  constructor(
    readonly dir: string,
    private readonly random: () => number,
  ) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  private words(count: number): string {
    const pools = [CHINESE, ENGLISH, CHINESE, ENGLISH, ODD];
    return Array.from({ length: count }, () => this.pick(this.pick(pools))).join(this.random() < 0.5 ? " " : "");
  }

  /** A new document name, `YYYY-MM-DD-<slug>.md`. */
  name(): string {
    this.serial += 1;
    const year = 2020 + Math.floor(this.random() * 7);
    const month = String(1 + Math.floor(this.random() * 12)).padStart(2, "0");
    const day = String(1 + Math.floor(this.random() * 28)).padStart(2, "0");
    return `${year}-${month}-${day}-${this.pick(SLUG_WORDS)}-${this.pick(SLUG_WORDS)}-${this.serial}.md`;
  }

  /** A document's text: usually a frontmatter with some of the fields, sometimes none or a broken one. */
  text(): string {
    const roll = this.random();
    if (roll < 0.05) return `no frontmatter, just ${this.words(3)}\n`;
    if (roll < 0.08) return `---\ntitle: ${this.words(2)}\nnever closed\n`;
    const lines = ["---"];
    if (this.random() < 0.9) lines.push(`title: ${this.words(1 + Math.floor(this.random() * 4))}`);
    const keywords = Array.from({ length: Math.floor(this.random() * 5) }, () => this.words(1));
    if (keywords.length > 0)
      lines.push(this.random() < 0.5 ? `keywords: ${keywords.join(", ")}` : `keywords: [${keywords.join(", ")}]`);
    if (this.random() < 0.8) {
      const long = this.random() < 0.1 ? 60 : 2 + Math.floor(this.random() * 10);
      lines.push(`summary: ${this.words(long)}`);
    }
    if (this.random() < 0.5)
      lines.push(`last_verified: 2026-0${1 + Math.floor(this.random() * 9)}-1${Math.floor(this.random() * 9)}`);
    lines.push("---", `body ${this.words(5)}`, "");
    return lines.join("\n");
  }

  /** Documents now in the folder (regular files with a document's name). */
  docs(): string[] {
    return listLibraryDocs(this.dir);
  }

  seed(count: number): void {
    mkdirSync(this.dir, { recursive: true });
    for (let index = 0; index < count; index += 1) writeFileSync(join(this.dir, this.name()), this.text());
  }

  /**
   * One step of changes; returns the paths written, for the write tools' callback
   * (`noted` of them are reported, the others only reach the folder, as through the shell).
   */
  step(changes: number): { path: string; noted: boolean }[] {
    const touched: { path: string; noted: boolean }[] = [];
    const note = (path: string) => touched.push({ path, noted: this.random() < 0.5 });
    for (let change = 0; change < changes; change += 1) {
      const docs = this.docs();
      const doc = docs.length > 0 ? join(this.dir, this.pick(docs)) : undefined;
      const roll = this.random();
      if (roll < 0.2 || doc === undefined) {
        const path = join(this.dir, this.name());
        writeFileSync(path, this.text());
        note(path);
      } else if (roll < 0.4) {
        writeFileSync(doc, this.text());
        note(doc);
      } else if (roll < 0.5) {
        // As sed -i does: a new file renamed over the old one.
        const temp = join(this.dir, `.tmp-${this.serial}`);
        writeFileSync(temp, this.text());
        renameSync(temp, doc);
        note(doc);
      } else if (roll < 0.6) {
        appendFileSync(doc, `more body ${this.words(2)}\n`);
        note(doc);
      } else if (roll < 0.72) {
        rmSync(doc);
      } else if (roll < 0.84) {
        const to = join(this.dir, this.name());
        renameSync(doc, to);
        note(to);
      } else if (roll < 0.9) {
        // A link is not a document, even to one.
        rmSync(doc);
        symlinkSync(join(this.dir, this.pick(this.docs().concat([doc.slice(this.dir.length + 1)]))), doc);
      } else if (roll < 0.95) {
        mkdirSync(join(this.dir, this.name()));
      } else {
        writeFileSync(join(this.dir, `notes-${this.serial}.txt`), this.words(3));
      }
    }
    return touched;
  }
}

/** The INDEX.md text today's regeneration writes for the folder as it is now. */
export function referenceIndexText(dir: string, locale: "zh" | "en" = "zh"): string {
  const entries = listLibraryDocs(dir).flatMap((file) => {
    const head = readHead(join(dir, file));
    return head === undefined ? [] : [parseLibraryDoc(file, head)];
  });
  return renderIndex(entries, { locale });
}
