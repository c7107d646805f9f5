import { describe, expect, it } from "vitest";
import { globMatcher } from "../../src/toolhost/tools/glob-pattern.js";
import { headTail } from "../../src/toolhost/tools/truncate-output.js";

describe("glob patterns", () => {
  it.each([
    ["*.md", "notes/a.md", true],
    ["*.md", "a.txt", false],
    ["docs/*.md", "docs/a.md", true],
    ["docs/*.md", "docs/x/a.md", false],
    ["docs/**/*.md", "docs/x/y/a.md", true],
    ["docs/**/*.md", "docs/a.md", true],
    ["src/**", "src/a/b.ts", true],
    ["*.{ts,js}", "a.js", true],
    ["file-?.txt", "file-1.txt", true],
    ["[!a]*.txt", "b.txt", true],
    ["[!a]*.txt", "a.txt", false],
  ])("%s matches %s: %s", (pattern, path, expected) => {
    expect(globMatcher(pattern)(path)).toBe(expected);
  });
});

describe("head + tail truncation", () => {
  it("keeps short output as it is", () => {
    expect(headTail("hello", 10)).toEqual({ text: "hello", truncated: false });
  });

  it("keeps head and tail with a marker counting what was cut, never splitting characters", () => {
    const text = `${"头".repeat(100)}${"x".repeat(1000)}${"尾".repeat(100)}`;
    const result = headTail(text, 200);
    expect(result.truncated).toBe(true);
    expect(result.text.startsWith("头")).toBe(true);
    expect(result.text.endsWith("尾")).toBe(true);
    expect(result.text).not.toContain("\uFFFD");
    expect(result.text).toMatch(/…\[\d+ bytes truncated\]…/);
  });
});
