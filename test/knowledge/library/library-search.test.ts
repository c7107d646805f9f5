/**
 * The term index ranks exactly as the search before it (a scan of every INDEX.md line,
 * kept verbatim in reference-search.ts): the same hits, scores and order for the bench's
 * queries and many odd ones, over a generated library of Chinese and English documents,
 * and through the keeper after every step of edits, deletions and renames.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LibraryKeeper } from "../../../src/knowledge/library/library-keeper.js";
import { searchIndex, TermIndex } from "../../../src/knowledge/library/library-term-index.js";
import { readFileSync } from "node:fs";
import { tempDir } from "../../helpers/temp-dir.js";
import { BENCH_QUERIES, Corpus, EXTRA_QUERIES, referenceIndexText, seeded } from "./library-corpus.js";
import { referenceSearch } from "./reference-search.js";

const QUERIES = [...BENCH_QUERIES, ...EXTRA_QUERIES];
const LIMITS = [1, 5, 50];

function expectSameAsReference(indexText: string, search: (query: string, limit: number) => unknown): void {
  for (const query of QUERIES)
    for (const limit of LIMITS)
      expect(search(query, limit), `${query} (limit ${limit})`).toEqual(referenceSearch(indexText, query, limit));
}

describe("the term index ranks as the scan it replaces", () => {
  it("over a generated library, for the bench's queries and odd ones", () => {
    const corpus = new Corpus(tempDir("laoding-libsearch-"), seeded(7));
    corpus.seed(800);
    const text = referenceIndexText(corpus.dir);
    expect(referenceSearch(text, "死锁", 50).length).toBeGreaterThan(20);
    expect(referenceSearch(text, "deadlock", 50).length).toBeGreaterThan(20);
    expectSameAsReference(text, (query, limit) => searchIndex(text, query, limit));
  });

  it("over the bench's library shape, where one term matches every document and scores tie", () => {
    const lines = Array.from({ length: 1500 }, (_, index) => {
      const topic = ["mysql 死锁", "飞书 卡片", "nginx 502"][index % 3] as string;
      const [first = "", second = ""] = topic.split(" ");
      return `- 2026-01-${String((index % 28) + 1).padStart(2, "0")}-${first}-${index}.md | ${topic} 实录 ${index} | ${first},${second},case-${index},deadlock-${index % 3 === 0 ? "yes" : "no"} | ${topic} 的排查步骤与结论(第 ${index} 篇),rollback plan included | 验证 -`;
    });
    const text = `# header\n<!-- count: ${lines.length} -->\n${lines.join("\n")}\n`;
    expectSameAsReference(text, (query, limit) => searchIndex(text, query, limit));
  });

  it("lists packed by a freeze and grown after it rank the same", async () => {
    const corpus = new Corpus(tempDir("laoding-libsearch-"), seeded(13));
    corpus.seed(400);
    const lines = referenceIndexText(corpus.dir).split("\n").slice(2, -1);
    const index = new TermIndex();
    const ids = lines.map((line, position) => {
      const id = index.add(line.slice(2, line.indexOf(" | ")), line);
      return { id, position };
    });
    await index.freeze();
    const more = new Corpus(tempDir("laoding-libsearch-"), seeded(17));
    more.seed(150);
    const added = referenceIndexText(more.dir).split("\n").slice(2, -1);
    for (const line of added) index.add(line.slice(2, line.indexOf(" | ")), line);
    for (const { id, position } of ids) if (position % 5 === 0) index.remove(id);
    const kept = [...lines.filter((_, position) => position % 5 !== 0), ...added];
    const text = `header\ncount\n${kept.join("\n")}\n`;
    expectSameAsReference(text, (query, limit) => index.search(query, limit));
  });

  it("removed documents leave the results, as if they had never been added", () => {
    const corpus = new Corpus(tempDir("laoding-libsearch-"), seeded(11));
    corpus.seed(300);
    const lines = referenceIndexText(corpus.dir).split("\n").slice(2, -1);
    const index = new TermIndex();
    const ids = lines.map((line) => index.add(line.slice(2, line.indexOf(" | ")), line));
    const kept = lines.filter((_, position) => position % 3 !== 0);
    ids.forEach((id, position) => {
      if (position % 3 === 0) index.remove(id);
    });
    expect(index.size).toBe(kept.length);
    expect(index.deadCount).toBe(lines.length - kept.length);
    const text = `header\ncount\n${kept.join("\n")}\n`;
    expectSameAsReference(text, (query, limit) => index.search(query, limit));
  });
});

describe("the keeper's search equals today's after every change", () => {
  const keepers: LibraryKeeper[] = [];
  afterEach(() => {
    for (const keeper of keepers.splice(0)) keeper.close();
  });

  for (const watch of [true, false])
    it(`edits, deletions, renames, links and folders${watch ? "" : ", without a watch on the folder"}`, async () => {
      const corpus = new Corpus(tempDir("laoding-libkeeper-"), seeded(watch ? 29 : 31));
      corpus.seed(400);
      const keeper = new LibraryKeeper({ dir: corpus.dir, locale: "zh", sliceMs: 1, watch });
      keepers.push(keeper);
      // Without a watch every search compares every file: fewer steps keep the test short.
      for (let step = 0; step < (watch ? 10 : 5); step += 1) {
        if (step > 0)
          for (const { path, noted } of corpus.step(1 + (step % 4) * 3)) if (noted) keeper.noteWritten(path);
        const text = referenceIndexText(corpus.dir);
        for (const query of QUERIES)
          for (const limit of LIMITS)
            expect((await keeper.search(query, limit)).hits, `step ${step}: ${query} (limit ${limit})`).toEqual(
              referenceSearch(text, query, limit),
            );
        const refreshed = await keeper.refresh();
        expect(refreshed.count).toBe(text.split("\n").length - 3);
        // INDEX.md is byte for byte what today's regeneration writes.
        expect(readFileSync(join(corpus.dir, "INDEX.md"), "utf8")).toBe(text);
      }
      expect(keeper.watching).toBe(watch);
    }, 120_000);
});
