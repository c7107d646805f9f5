/**
 * How the console shows an answer: Markdown shown plainly (console-markdown.ts) and words
 * wrapped to the terminal (console-wrap.ts), whole or piece by piece, replayed on a
 * test terminal that counts columns as a terminal does.
 */
import { describe, expect, it } from "vitest";
import { plainMarkdown } from "../../src/channels/console-markdown.js";
import { createWrapWriter } from "../../src/channels/console-wrap.js";
import { terminalScreen } from "../helpers/terminal-screen.js";

/** A terminal's columns as the test terminal counts them (CJK two). */
const columnsOf = (row: string) =>
  [...row].reduce((sum, ch) => sum + (/[\u2e80-\u9fff\uff00-\uff60]/.test(ch) ? 2 : 1), 0);

/** The rows a terminal of `columns` shows after `pieces` are printed after `prefix`. */
function printed(pieces: string[], columns: number, prefix = "bot> "): { rows: string[]; output: string } {
  let output = prefix;
  const writer = createWrapWriter({
    write: (chunk) => (output += chunk),
    columns: () => columns,
    startColumn: columnsOf(prefix),
  });
  for (const piece of pieces) writer.append(piece);
  const screen = terminalScreen(columns);
  // A terminal's line discipline turns `\n` into `\r\n` (onlcr), as the pty tests see it.
  screen.write(output.replaceAll("\n", "\r\n"));
  return { rows: screen.rows(), output };
}

const ANSWER = [
  "# Deploying the service",
  "",
  "Run **`npm run build`** first, then *copy* the `dist/` folder. See [the guide](https://example.com/deploy) or __the notes__.",
  "",
  "## Steps",
  "1. Stop the old process with `systemctl stop app` (it may take a few seconds to drain connections).",
  "- keep snake_case_names and 2 * 3 as they are; \\*escaped\\* stars stay",
  "> a quoted line",
  "```bash",
  "echo **not bold** `not code`",
  "```",
  "Done: 部署完成，服务已经重新启动。",
].join("\n");

describe("Markdown shown plainly", () => {
  it("drops emphasis, code and heading marks, writes links out, keeps lists, quotes and code blocks as written", () => {
    expect(plainMarkdown(ANSWER).split("\n")).toEqual([
      "Deploying the service",
      "",
      "Run npm run build first, then copy the dist/ folder. See the guide (https://example.com/deploy) or the notes.",
      "",
      "Steps",
      "1. Stop the old process with systemctl stop app (it may take a few seconds to drain connections).",
      "- keep snake_case_names and 2 * 3 as they are; *escaped* stars stay",
      "> a quoted line",
      "```bash",
      "echo **not bold** `not code`",
      "```",
      "Done: 部署完成，服务已经重新启动。",
    ]);
  });

  it("keeps what is no mark: an unclosed marker, a lone # word, a bracket that is no link, a link to itself", () => {
    expect(plainMarkdown("a **b and `c")).toBe("a **b and `c");
    expect(plainMarkdown("#hashtag and #1")).toBe("#hashtag and #1");
    expect(plainMarkdown("- [x] done [1]")).toBe("- [x] done [1]");
    expect(plainMarkdown("[https://a.io](https://a.io)")).toBe("https://a.io");
    expect(plainMarkdown("``a ` b``")).toBe("a ` b");
  });

  it("an unfinished answer renders only what cannot change: every prefix renders to the start of the whole", () => {
    const whole = plainMarkdown(ANSWER);
    for (let end = 1; end <= ANSWER.length; end += 1) {
      // The preview arrives trimmed (channel.ts: the whole visible answer so far).
      const partial = plainMarkdown(ANSWER.slice(0, end).trim(), true);
      expect(
        whole.startsWith(partial),
        `prefix ${JSON.stringify(ANSWER.slice(0, end))} → ${JSON.stringify(partial)}`,
      ).toBe(true);
    }
    // What is held back: an opened mark, a link still being written, a heading mark alone.
    expect(plainMarkdown("Run **npm", true)).toBe("Run ");
    expect(plainMarkdown("See [the guide](https://exa", true)).toBe("See ");
    expect(plainMarkdown("Intro\n##", true)).toBe("Intro\n");
    expect(plainMarkdown("Run `npm` now", true)).toBe("Run npm now");
  });
});

describe("words wrapped to the terminal", () => {
  it("fills rows to one column short of the width and moves a word that does not fit to the next row whole", () => {
    const { rows } = printed(["the quick brown fox jumps over the lazy dog and keeps running far away"], 30);
    expect(rows).toEqual(["bot> the quick brown fox", "jumps over the lazy dog and", "keeps running far away"]);
    expect(Math.max(...rows.map(columnsOf))).toBeLessThanOrEqual(29);
  });

  it("counts CJK as two columns, breaks between characters, and keeps closing punctuation with its character", () => {
    const { rows } = printed(["这是一个很长的中文句子，没有空格，应该在任何字之间换行。好的。"], 20, "机器人> ");
    expect(rows).toEqual(["机器人> 这是一个很", "长的中文句子，没有", "空格，应该在任何字", "之间换行。好的。"]);
    expect(Math.max(...rows.map(columnsOf))).toBeLessThanOrEqual(19);
    // Mixed with Latin words, and no row starts with closing punctuation.
    const mixed = printed(["部署 the service 到服务器上，然后 restart 它。再检查一下日志，看看有没有错误。"], 16);
    expect(mixed.rows.every((row) => !/^[，。]/.test(row))).toBe(true);
    expect(mixed.rows.join("").replaceAll(" ", "")).toBe(
      "bot>部署theservice到服务器上，然后restart它。再检查一下日志，看看有没有错误。",
    );
  });

  it("breaks a word longer than the row at the row's end, on a row of its own", () => {
    const url = `https://example.com/${"a".repeat(60)}`;
    const { rows } = printed([`see ${url} now`], 30);
    expect(rows).toEqual(["bot> see", url.slice(0, 29), url.slice(29, 58), `${url.slice(58)} now`]);
  });

  it("starts a list item's next rows under its text, and keeps a code line's indentation", () => {
    const { rows } = printed(
      ["intro\n- one two three four five six seven\n12. alpha beta gamma delta\n    indented code"],
      24,
    );
    expect(rows).toEqual([
      "bot> intro",
      "- one two three four",
      "  five six seven",
      "12. alpha beta gamma",
      "    delta",
      "    indented code",
    ]);
  });

  it("never prints a control character: an escape sequence in the answer cannot move the cursor", () => {
    const { output } = printed(["bad\x1b[2Jclear\r\x07 and\ttab"], 80, "");
    expect(output).toBe("bad[2Jclear and    tab");
  });

  it("piece by piece, split anywhere (mid-word too), the screen is the same as printed whole", () => {
    const text = plainMarkdown(ANSWER);
    for (const columns of [20, 33, 80]) {
      const whole = printed([text], columns);
      expect(whole.output).not.toContain("\x1b");
      for (const step of [1, 3, 7, 11]) {
        const pieces: string[] = [];
        for (let start = 0; start < text.length; start += step) pieces.push(text.slice(start, start + step));
        const streamed = printed(pieces, columns);
        expect(streamed.rows, `${columns} columns, pieces of ${step}`).toEqual(whole.rows);
      }
    }
  });
});
