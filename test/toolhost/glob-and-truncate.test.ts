import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/toolhost/tool-error.js";
import { globMatcher } from "../../src/toolhost/tools/glob-pattern.js";
import { compileLinear } from "../../src/toolhost/tools/linear-regex.js";
import { answerBudget, capturedText, encodedLength, headTail } from "../../src/toolhost/tools/truncate-output.js";

/** Bytes of `text` inside a JSON frame, as the wire carries it. */
const onTheWire = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

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
    ["**", "a/\u0001\nb", true],
    ["*", "\n\u0007", true],
    ["*a*a*a*a*a*a*a*a*b", "a".repeat(200), false],
  ])("%s matches %s: %s", (pattern, path, expected) => {
    expect(globMatcher(pattern)(path)).toBe(expected);
  });

  it.each([
    ["{a,b", /pattern \{a,b: a \{ is never closed/],
    ["[z-a]*", /pattern \[z-a\]\*.*not a valid regular expression.*invalid character class range/],
    ["[]x", /empty \[\] class/],
  ])("an invalid glob %s is INVALID_ARGS naming the problem", (pattern, reason) => {
    const error = (() => {
      try {
        globMatcher(pattern, "pattern");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ code: "INVALID_ARGS", message: expect.stringMatching(reason) });
  });
});

describe("linear-time regular expressions", () => {
  it("^(a+)+$ over many a's and a b answers at once instead of backtracking", () => {
    expect(compileLinear("^(a+)+$", "pattern").test(`${"a".repeat(5_000)}b`)).toBe(false);
    expect(compileLinear("^(a+)+$", "pattern").test("aaaa")).toBe(true);
  });

  it.each(["(a", "(?=a)b", "(a)\\1"])("refuses %s as INVALID_ARGS", (pattern) => {
    expect(() => compileLinear(pattern, "pattern")).toThrow(
      expect.objectContaining({
        code: "INVALID_ARGS",
        message: expect.stringMatching(/^pattern is not a valid regular expression/),
      }),
    );
  });
});

describe("bounded work per test (issue 32, item 2)", () => {
  it.each([
    // RE2 itself admits counts up to 1000: 2,002 instructions on every character of a 3.9 MB line.
    ["[a-z]{1,1000}[0-9]", /^pattern repeats \{1,1000\}: a repetition count may be at most 100/],
    ["x{101}", /^pattern repeats \{101\}: a repetition count may be at most 100/],
    ["(?:\\d{2}){1,200}", /^pattern repeats \{1,200\}/],
    // Nested counts multiply: 400 copies, each counted.
    [
      "(?:[a-z]{1,20}){1,20}",
      /^pattern is too large: it compiles to (about )?\d+ instructions, more than 256 \(repetitions multiply/,
    ],
    // 90,000 instructions promised by the text alone: refused before it is compiled.
    [`(?:${"a".repeat(900)}){100}`, /^pattern is too large: it compiles to about \d+ instructions/],
    [`${"[ab]".repeat(300)}`, /^pattern is too large: it compiles to 30\d instructions/],
  ])("refuses %s, saying which limit", (pattern, reason) => {
    expect(() => compileLinear(pattern, "pattern")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGS", message: expect.stringMatching(reason) }),
    );
  });

  it.each([
    "[a-z]{1,100}[0-9]",
    "\\d{4}-\\d{2}-\\d{2}",
    "(?i)(api[_-]?key|secret|token)\\s*[:=]\\s*[\"'][A-Za-z0-9_\\-]{16,}",
    "[{1,1000}]",
    "\\Q{1,1000}\\E",
  ])("accepts %s", (pattern) => {
    expect(() => compileLinear(pattern, "pattern")).not.toThrow();
  });

  it("reads at most 64 KiB of a text, fewer the larger the pattern, and only that much", () => {
    const small = compileLinear("z", "pattern");
    expect(small.maxChars).toBe(64 * 1024);
    expect(small.test(`${"a".repeat(64 * 1024 - 1)}z`)).toBe(true);
    expect(small.test(`${"a".repeat(64 * 1024)}z`)).toBe(false);
    const large = compileLinear("[a-z]{1,100}[0-9]", "pattern");
    expect(large.maxChars).toBeLessThan(4 * 1024);
    expect(large.test(`${"a".repeat(large.maxChars - 1)}7`)).toBe(true);
    expect(large.test(`${"a".repeat(large.maxChars)}7`)).toBe(false);
  });

  it("a glob that compiles to too large a program is refused the same way", () => {
    expect(() => globMatcher("*a".repeat(200), "pattern")).toThrow(
      expect.objectContaining({ code: "INVALID_ARGS", message: expect.stringMatching(/too large: it compiles to/) }),
    );
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

  it("measures after JSON encoding: control characters count six bytes each", () => {
    const names = Array.from({ length: 2_000 }, () => "\u0001\u0002\u0003\u001f".repeat(10)).join("\n");
    expect(Buffer.byteLength(names)).toBeLessThan(100_000);
    expect(encodedLength(names)).toBe(onTheWire(names));
    const result = headTail(names, 10_000);
    expect(result.truncated).toBe(true);
    expect(onTheWire(result.text)).toBeLessThanOrEqual(10_000);
    expect(result.text).toMatch(/…\[\d+ bytes truncated\]…/);
  });

  it("counts quotes, backslashes, pairs and lone surrogates as the encoder does", () => {
    for (const text of ['"\\\t\b\f\r\u007f', "😀x😀", "a\ud800b\udc00c", "é中"])
      expect(encodedLength(text)).toBe(onTheWire(text));
    const capped = headTail("😀".repeat(1_000), 101);
    expect(capped.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(onTheWire(capped.text)).toBeLessThanOrEqual(101);
  });

  it("a command's captured head and tail say how much was never kept, within the cap", () => {
    const text = capturedText(Buffer.from("\u0001".repeat(500)), Buffer.from("end"), 10_000, 1_024);
    expect(text.truncated).toBe(true);
    expect(onTheWire(text.text)).toBeLessThanOrEqual(1_024);
    expect(text.text.endsWith("end")).toBe(true);
  });

  it("an answer's budget leaves room in the frame for the envelope", () => {
    expect(answerBudget(40_000, 16 * 1024 * 1024)).toBe(40_000);
    expect(answerBudget(8 * 1024 * 1024, 64 * 1024)).toBeLessThan(64 * 1024 - 4 * 1024);
  });
});
