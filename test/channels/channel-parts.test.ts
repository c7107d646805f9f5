/** The pure parts of the chat channels: formatting, splitting, access, the per-chat queue. */
import { describe, expect, it } from "vitest";
import { createAccessPolicy, operatorsFor } from "../../src/channels/access-policy.js";
import type { PlatformMessage } from "../../src/channels/chat-platform.js";
import { splitText } from "../../src/channels/split-text.js";
import { markdownToTelegramHtml } from "../../src/channels/telegram/markdown-to-html.js";

describe("Markdown to Telegram HTML", () => {
  it("converts what models write and escapes everything else", () => {
    expect(
      markdownToTelegramHtml("# Title\n**bold** and *it* and `a<b>` and ~~gone~~ [site](https://x.test/?a=1&b=2)"),
    ).toBe(
      '<b>Title</b>\n<b>bold</b> and <i>it</i> and <code>a&lt;b&gt;</code> and <s>gone</s> <a href="https://x.test/?a=1&amp;b=2">site</a>',
    );
    expect(markdownToTelegramHtml("```ts\nconst a = 1 < 2;\n```")).toBe(
      '<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>',
    );
    expect(markdownToTelegramHtml("- one\n- two\n> quoted\n> more")).toBe(
      "• one\n• two\n<blockquote>quoted\nmore</blockquote>",
    );
    expect(markdownToTelegramHtml("snake_case_name and 2 * 3 * 4 & <tag>")).toBe(
      "snake_case_name and 2 * 3 * 4 &amp; &lt;tag&gt;",
    );
    expect(markdownToTelegramHtml("```\nunclosed")).toBe("<pre>unclosed</pre>");
  });
});

describe("splitText", () => {
  const fits = (limit: number) => (part: string) => part.length <= limit;
  it("keeps a short text whole and splits at paragraphs, then lines, then words", () => {
    expect(splitText("short", fits(10))).toEqual(["short"]);
    expect(splitText("aaaa\n\nbbbb\n\ncccc", fits(10))).toEqual(["aaaa\n\nbbbb", "cccc"]);
    expect(splitText("line one\nline two\nline three", fits(18))).toEqual(["line one\nline two", "line three"]);
    expect(splitText("alpha beta gamma delta", fits(11))).toEqual(["alpha beta", "gamma delta"]);
    const long = "x".repeat(25);
    expect(splitText(long, fits(10))).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
  });
  it("never loses text and never exceeds the limit", () => {
    const lines = Array.from({ length: 40 }, (_, index) => `${index} ${"word ".repeat((index % 7) * 9)}`.trim());
    // Paragraphs of three lines each, some lines longer than a part.
    const text = lines.map((line, index) => (index % 3 === 2 ? `${line}\n\n` : `${line}\n`)).join("");
    const parts = splitText(text, fits(120));
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(120);
    expect(parts.join(" ").replace(/\s+/g, " ")).toBe(text.replace(/\s+/g, " ").trim());
  });
});

describe("access policy", () => {
  const message = (overrides: Partial<PlatformMessage>): PlatformMessage => ({
    channel: "telegram",
    chatId: "1",
    userId: "10",
    text: "hi",
    chatType: "private",
    ...overrides,
  });
  it("answers allowlisted users, refuses others, ignores group chatter without a mention", () => {
    const policy = createAccessPolicy({ allowedUsers: ["10"], operators: ["10"], groupPolicy: "mention" });
    expect(policy.decide(message({}))).toBe("answer");
    expect(policy.decide(message({ userId: "11" }))).toBe("refuse");
    expect(policy.decide(message({ userId: "11", chatType: "group" }))).toBe("ignore");
    expect(policy.decide(message({ chatType: "group", mentionedBot: true }))).toBe("answer");
    expect(policy.isOperator("10")).toBe(true);
    expect(policy.isOperator("11")).toBe(false);
    expect(policy.openToEveryone).toBe(false);
  });
  it("* allows everyone on purpose; no list allows everyone and says so; GROUP_POLICY=all answers every group message", () => {
    expect(
      createAccessPolicy({ allowedUsers: ["*"], operators: [], groupPolicy: "mention" }).decide(
        message({ userId: "99" }),
      ),
    ).toBe("answer");
    const open = createAccessPolicy({ operators: [], groupPolicy: "all" });
    expect(open.openToEveryone).toBe(true);
    expect(open.decide(message({ chatType: "group" }))).toBe("answer");
  });
  it("reads OPERATOR_IDS per channel", () => {
    expect(operatorsFor("telegram", ["telegram:1", "feishu:ou_a", "7"])).toEqual(["1", "7"]);
    expect(operatorsFor("feishu", ["telegram:1", "feishu:ou_a", "7"])).toEqual(["ou_a", "7"]);
  });
});
