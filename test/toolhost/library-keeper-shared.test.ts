/**
 * The library tools of one child share one keeper per library folder, and the session
 * setup's background refresh (refreshLibraryInBackground) builds it without waiting.
 */
import { existsSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { libraryKeeper, refreshLibraryInBackground } from "../../src/toolhost/tools/library-tools.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("the child's library keeper", () => {
  it("is one per folder and locale; the background refresh returns at once and brings INDEX.md up to date", async () => {
    const dir = realpathSync(tempDir("laoding-libshared-"));
    writeFileSync(join(dir, "2026-01-01-one.md"), "---\ntitle: 一\n---\n");
    const keeper = libraryKeeper(dir, "zh");
    expect(libraryKeeper(dir, "zh")).toBe(keeper);
    expect(libraryKeeper(dir, "en")).not.toBe(keeper);
    refreshLibraryInBackground({ dir, locale: "zh" });
    // Nothing was done on the caller's turn: the keeper works after it returns.
    expect(existsSync(join(dir, "INDEX.md"))).toBe(false);
    expect(await keeper.refresh()).toMatchObject({ count: 1 });
    expect(existsSync(join(dir, "INDEX.md"))).toBe(true);
    expect(keeper.stats.builds).toBe(1);
    libraryKeeper(dir, "en").close();
    keeper.close();
  });

  it("a library folder that cannot be resolved is left alone", () => {
    expect(() => refreshLibraryInBackground({ dir: "/nonexistent/library", locale: "zh" })).not.toThrow();
  });
});
