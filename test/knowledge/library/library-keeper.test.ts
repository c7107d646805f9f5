/**
 * The child's keeper of an experience library: only changed documents are read again, a
 * new keeper takes its lines from an up-to-date INDEX.md, INDEX.md keeps the invariants
 * the stateless check relies on, hand edits are put back without two keepers fighting,
 * and long work yields so other work runs in between (asserted by order, not by time).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureFresh, INDEX_HEADERS } from "../../../src/knowledge/library/library-index.js";
import { LibraryKeeper, type LibraryKeeperOptions } from "../../../src/knowledge/library/library-keeper.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { Corpus, referenceIndexText, seeded } from "./library-corpus.js";

const keepers: LibraryKeeper[] = [];
afterEach(() => {
  for (const keeper of keepers.splice(0)) keeper.close();
});

function keeper(dir: string, options: Partial<LibraryKeeperOptions> = {}): LibraryKeeper {
  const made = new LibraryKeeper({ dir, locale: "zh", ...options });
  keepers.push(made);
  return made;
}

function library(count: number, seed = 3): Corpus {
  const corpus = new Corpus(tempDir("laoding-keeper-"), seeded(seed));
  corpus.seed(count);
  return corpus;
}

const indexText = (dir: string) => readFileSync(join(dir, "INDEX.md"), "utf8");

/**
 * Lets the documents' last change (their ctime, which only the clock sets) fall behind: an
 * index line is taken from INDEX.md only for a document clearly older than the index.
 */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 150));
}

describe("incremental: only what changed is read", () => {
  it("an edit, a new document and a deletion read one or two documents, not the library", async () => {
    const corpus = library(300);
    const kept = keeper(corpus.dir);
    await kept.search("死锁", 10);
    expect(kept.stats).toMatchObject({ builds: 1, reads: 300 });
    const [first = "", second = ""] = corpus.docs();
    writeFileSync(join(corpus.dir, first), "---\ntitle: 改过的 死锁 排查\n---\n");
    writeFileSync(join(corpus.dir, "2031-01-01-new-doc.md"), "---\ntitle: new deadlock doc\n---\n");
    rmSync(join(corpus.dir, second));
    const { hits } = await kept.search("死锁", 50);
    expect(hits.map((hit) => hit.file)).toContain(first);
    expect(kept.stats).toMatchObject({ builds: 1, reads: 302 });
    await kept.refresh();
    expect(indexText(corpus.dir)).toBe(referenceIndexText(corpus.dir));
  });

  it("a new keeper takes index lines from an up-to-date INDEX.md and reads only documents newer than it", async () => {
    const corpus = library(200);
    await settle();
    const first = keeper(corpus.dir);
    await first.refresh();
    first.close();
    const second = keeper(corpus.dir);
    await second.search("deadlock", 5);
    expect(second.stats).toMatchObject({ builds: 1, reads: 0, indexWrites: 0 });
    second.close();
    const [newer = ""] = corpus.docs();
    writeFileSync(join(corpus.dir, newer), "---\ntitle: 刚改的\n---\n");
    const third = keeper(corpus.dir);
    expect(await third.refresh()).toEqual({ regenerated: true, count: 200, reason: "document-newer" });
    expect(third.stats.reads).toBe(1);
    expect(indexText(corpus.dir)).toBe(referenceIndexText(corpus.dir));
  });

  it("another locale's INDEX.md is no source: every document is read and the header changes", async () => {
    const corpus = library(50);
    await keeper(corpus.dir).refresh();
    const english = keeper(corpus.dir, { locale: "en" });
    expect(await english.refresh()).toMatchObject({ regenerated: true, reason: "header-changed" });
    expect(english.stats.reads).toBe(50);
    expect(indexText(corpus.dir).startsWith(`${INDEX_HEADERS.en}\n`)).toBe(true);
  });
});

describe("INDEX.md", () => {
  it("its mtime satisfies the stateless check (ensureFresh) of another process, after writes too", async () => {
    const corpus = library(100);
    const kept = keeper(corpus.dir);
    await kept.refresh();
    expect(ensureFresh(corpus.dir, { locale: "zh" })).toEqual({ regenerated: false, count: 100 });
    const [doc = ""] = corpus.docs();
    writeFileSync(join(corpus.dir, doc), "---\ntitle: edited just now\n---\n");
    const since = kept.noteWritten(join(corpus.dir, doc));
    expect(await kept.refresh({ since })).toMatchObject({ regenerated: true });
    expect(ensureFresh(corpus.dir, { locale: "zh" })).toEqual({ regenerated: false, count: 100 });
  });

  it("a hand edit is put back; a second keeper of the folder accepts the same text without writing again", async () => {
    const corpus = library(80);
    const first = keeper(corpus.dir);
    const second = keeper(corpus.dir);
    await first.refresh();
    await second.refresh();
    const expected = referenceIndexText(corpus.dir);
    writeFileSync(join(corpus.dir, "INDEX.md"), "edited by hand\n");
    expect(await first.refresh()).toMatchObject({ regenerated: true, reason: "header-changed" });
    expect(indexText(corpus.dir)).toBe(expected);
    const writes = second.stats.indexWrites;
    // The second keeper sees INDEX.md replaced twice (the hand edit, then the first keeper's
    // rewrite); whatever it saw, the text it finds now is its own: nothing more to write.
    await second.refresh();
    const settled = second.stats.indexWrites;
    expect(await second.refresh()).toEqual({ regenerated: false, count: 80 });
    expect(await first.refresh()).toEqual({ regenerated: false, count: 80 });
    expect(second.stats.indexWrites).toBe(settled);
    expect(settled - writes).toBeLessThanOrEqual(1);
    expect(indexText(corpus.dir)).toBe(expected);
  });

  it("a hand-deleted INDEX.md comes back", async () => {
    const corpus = library(20);
    const kept = keeper(corpus.dir);
    await kept.refresh();
    rmSync(join(corpus.dir, "INDEX.md"));
    expect(await kept.refresh()).toMatchObject({ regenerated: true, reason: "missing" });
    expect(indexText(corpus.dir)).toBe(referenceIndexText(corpus.dir));
  });

  it("when INDEX.md cannot be written, the refresh says so and search still answers", async () => {
    const corpus = library(20);
    mkdirSync(join(corpus.dir, "INDEX.md"));
    const kept = keeper(corpus.dir);
    await expect(kept.refresh()).rejects.toThrow(/cannot write the index of/);
    expect((await kept.search("死锁", 50)).count).toBe(20);
  });
});

describe("long work yields", () => {
  it("while a rebuild reads 3,000 documents, other work runs; a search asked meanwhile answers after it, with its result", async () => {
    const corpus = library(3000, 5);
    const kept = keeper(corpus.dir, { sliceMs: 1 });
    await kept.refresh();
    const yieldsBefore = kept.stats.yields;
    const order: string[] = [];
    let rebuilding = true;
    let turns = 0;
    const ticker = (async () => {
      while (rebuilding) {
        turns += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const rebuild = kept.refresh({ rebuild: true }).then((result) => {
      rebuilding = false;
      order.push("rebuild");
      return result;
    });
    setTimeout(() => order.push("timer"), 0);
    // Asked after the rebuild began, the search is answered from the rebuilt state (it need not wait for INDEX.md).
    const search = kept.search("死锁", 5).then((result) => {
      order.push("search");
      return { ...result, readsThen: kept.stats.reads };
    });
    expect(await rebuild).toEqual({ regenerated: true, count: 3000, reason: "rebuild" });
    await ticker;
    expect(await search).toMatchObject({ count: 3000, readsThen: 6000 });
    expect(order[0]).toBe("timer");
    // The event loop turned many times while the rebuild ran: it never held the thread throughout.
    expect(turns).toBeGreaterThan(10);
    expect(kept.stats.yields - yieldsBefore).toBeGreaterThan(10);
    expect(kept.stats.reads).toBe(6000);
  }, 60_000);

  it("a library folder replaced by a new one is read afresh", async () => {
    const corpus = library(30);
    const kept = keeper(corpus.dir);
    expect((await kept.search("死锁", 50)).count).toBe(30);
    rmSync(corpus.dir, { recursive: true });
    mkdirSync(corpus.dir);
    writeFileSync(join(corpus.dir, "2026-01-01-only.md"), "---\ntitle: 唯一 死锁\n---\n");
    const { hits, count } = await kept.search("死锁", 50);
    expect(count).toBe(1);
    expect(hits.map((hit) => hit.file)).toEqual(["2026-01-01-only.md"]);
    expect(kept.stats.builds).toBe(2);
  });
});
