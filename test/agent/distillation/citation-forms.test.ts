/**
 * Citations as real models write them (issue 27): every form is counted and removed, in
 * both locales, the rest of its line stays; prose, code and bare ids are left alone; an
 * unlabelled wrapped id is a citation only with the loop on and where citations stand; the
 * scan stays linear on adversarial lines.
 */
import { describe, expect, it } from "vitest";
import { extractCitations, withoutLessonLines } from "../../../src/agent/distillation/citations.js";
import { withoutCitations } from "../../../src/agent/turn/lessons.js";
import type { TurnContext } from "../../../src/agent/turn/turn-context.js";

const BODY = "Done, restart it with --plain-tls.";
const ZH_BODY = "已完成，用 --plain-tls 重启即可。";

/** [form, answer as written, what the user sees, ids cited] */
const FORMS: [string, string, string, number[]][] = [
  ["plain line", `${BODY}\nLessons used: exp-3`, BODY, [3]],
  ["bold label", `${BODY}\n\n**Lessons used:** exp-3`, BODY, [3]],
  ["bold label, colon outside", `${BODY}\n**Lessons used**: exp-3, exp-7`, BODY, [3, 7]],
  ["italic label", `${BODY}\n*Lessons used*: exp-3`, BODY, [3]],
  ["underscore bold", `${BODY}\n__Lessons used__: exp-3`, BODY, [3]],
  ["underscore italic", `${BODY}\n_Lesson used:_ exp-3`, BODY, [3]],
  ["singular label", `${BODY}\nLesson used: exp-3`, BODY, [3]],
  ["used lessons", `${BODY}\nUsed lessons: exp-3`, BODY, [3]],
  ["brackets after the label", `${BODY}\nLessons used: [exp-3, exp-7]`, BODY, [3, 7]],
  ["each id bracketed", `${BODY}\nLessons used: [exp-3] [exp-7]`, BODY, [3, 7]],
  ["backticks after the label", `${BODY}\nLessons used: \`exp-3\`, \`exp-7\``, BODY, [3, 7]],
  ["bold ids", `${BODY}\nLessons used: **exp-3**`, BODY, [3]],
  ["parenthesis on its own line", `${BODY}\n(Lessons used: exp-3)`, BODY, [3]],
  ["parenthesis inside a line", "Restart it (Lessons used: exp-3) and retry.", "Restart it and retry.", [3]],
  ["bold parenthesis", `${BODY} **(Lessons used: exp-3)**`, BODY, [3]],
  ["trailing on the last line", `${BODY} Lessons used: exp-3`, BODY, [3]],
  ["trailing after a dash", "Restart it with --plain-tls — Lessons used: exp-3", "Restart it with --plain-tls", [3]],
  ["trailing after an emoji", `${BODY} 📚 Lessons used: exp-3`, BODY, [3]],
  ["within a sentence", `${BODY} The lessons used: exp-3.`, BODY, [3]],
  ["bare brackets at the end", "Restart it with --plain-tls [exp-3].", "Restart it with --plain-tls.", [3]],
  ["bare brackets, several ids", `${BODY} [exp-3, exp-7]`, BODY, [3, 7]],
  ["bare brackets on their own line", `${BODY}\n[exp-3]`, BODY, [3]],
  ["bare backticks", `${BODY} \`exp-3\``, BODY, [3]],
  ["bare parenthesis", `${BODY} (exp-3)`, BODY, [3]],
  ["separators", `${BODY}\nLessons used: exp-3 and exp-7; exp-9 / exp-11`, BODY, [3, 7, 9, 11]],
  ["zero-padded and long ids", `${BODY}\nLessons used: exp-000003, exp-0000000000000000017`, BODY, [3, 17]],
  ["trailing punctuation", `${BODY}\nLessons used: exp-3.`, BODY, [3]],
  ["blockquote", `${BODY}\n> **Lessons used:** exp-3`, BODY, [3]],
  ["list item", `${BODY}\n- Lessons used: exp-3`, BODY, [3]],
  ["numbered item", `${BODY}\n3. Lessons used: exp-3`, BODY, [3]],
  ["list under the label", `${BODY}\n\n**Lessons used:**\n- exp-3\n- exp-7\n\nBye.`, `${BODY}\n\nBye.`, [3, 7]],
  ["ids on the next line", `${BODY}\nLessons used:\nexp-3, exp-7`, BODY, [3, 7]],
  ["first line", "Lessons used: exp-4\nThe answer.", "The answer.", [4]],
  ["none", `${BODY}\n\nLessons used: none`, BODY, []],
  ["case", `${BODY}\nLESSONS USED: EXP-3`, BODY, [3]],
  ["zh plain", `${ZH_BODY}\n参考了 exp-3`, ZH_BODY, [3]],
  ["zh bare label", `${ZH_BODY}\n参考：exp-3`, ZH_BODY, [3]],
  ["zh full-width colon", `${ZH_BODY}\n参考了：exp-3、exp-7`, ZH_BODY, [3, 7]],
  ["zh bold label", `${ZH_BODY}\n\n**参考了：** exp-3、exp-7`, ZH_BODY, [3, 7]],
  ["zh 和 and ，", `${ZH_BODY}\n参考了 exp-3，exp-7 和 exp-9`, ZH_BODY, [3, 7, 9]],
  ["zh full-width parenthesis", `${ZH_BODY}（参考了 exp-3）`, ZH_BODY, [3]],
  ["zh parenthesis mid-line", "先停服务（参考了 exp-3）再重启。", "先停服务再重启。", [3]],
  ["zh 使用的经验", `${ZH_BODY}\n使用的经验：exp-5`, ZH_BODY, [5]],
  ["zh 参考了经验", `${ZH_BODY}\n参考了经验 exp-5`, ZH_BODY, [5]],
  ["zh trailing on the last line", `${ZH_BODY}参考了 exp-3`, ZH_BODY, [3]],
  ["zh within a sentence", `${ZH_BODY}本回答参考了 exp-3。`, ZH_BODY, [3]],
  ["zh brackets", `${ZH_BODY}【exp-3】`, ZH_BODY, [3]],
  ["zh none", `${ZH_BODY}\n参考了：无`, ZH_BODY, []],
  ["zh list under the label", `${ZH_BODY}\n**参考了：**\n1. exp-3\n2. exp-7`, ZH_BODY, [3, 7]],
];

/** Answers that hold no citation: returned exactly as written, nothing counted. */
const UNCHANGED: [string, string][] = [
  ["the word reference", "See the reference manual, section 3, for the flags."],
  ["参考 in prose", "参考文档在 docs/ 下，先读一遍再改配置。"],
  ["参考 before an id inside a sentence", "详情请参考 exp-3 的训练日志。"],
  ["参考 ending a sentence of prose", "详情请参考 exp-3"],
  ["lessons in prose", "The lessons used in training were fine; nothing more to add."],
  ["a label with no ids", "Lessons used: the ones from yesterday's post-mortem."],
  ["bare ids in prose", "Compare exp-3 and exp-4: exp-3 converged faster."],
  ["an id inside a word", "The folder myexp-3 and [exp-3-final] stay."],
  ["inline code holding more than an id", "Run `train --run exp-3` again."],
  ["a citation inside a fenced block", "Example:\n```\nLessons used: exp-3\n[exp-7]\n```\nThat is all."],
  ["a citation inside a tilde fence", "~~~md\n**Lessons used:** exp-3\n~~~"],
  ["blank lines and padding", "  first\n\n\n\nsecond  "],
];

/** A label and its ids with something after them, or written with odd spaces or other labels: stripped whatever was shown. */
const LABELLED_LEAKS: [string, string, string, number[]][] = [
  ["a comment in parentheses", `${BODY}\nLessons used: exp-3 (the flag one)`, BODY, [3]],
  ["a comment after a dash", `${BODY}\nLessons used: exp-3 - it told me the flag`, BODY, [3]],
  ["an emoji after", `${BODY}\nLessons used: exp-3 ✅`, BODY, [3]],
  ["html after", `${BODY}\nLessons used: exp-3<br>`, BODY, [3]],
  ["an html tag after a space", `${BODY}\nLessons used: exp-3 <sub>x</sub>`, BODY, [3]],
  ["a comment on the last line after text", `${BODY} Lessons used: exp-3 (the flag one)`, BODY, [3]],
  [
    "a comment on a line of its own mid-answer",
    `${BODY}\n\nLessons used: exp-3 (flag)\n\nBye.`,
    `${BODY}\n\nBye.`,
    [3],
  ],
  ["a parenthesis with a comment", `${BODY}\n(Lessons used: exp-3 - the flag one)`, BODY, [3]],
  ["zero-width space inside the label", `${BODY}\nLessons\u200b used: exp-3`, BODY, [3]],
  ["zero-width spaces around the label", `${BODY}\n\u200bLessons used:\u200b exp-3\u200b`, BODY, [3]],
  ["NBSP inside the label", `${BODY}\nLessons\u00a0used:\u00a0exp-3`, BODY, [3]],
  ["NBSP after a bold label", `${BODY}\n**Lessons used:**\u00a0exp-3`, BODY, [3]],
  ["a blank line between the label and the ids", `${BODY}\n\nLessons used:\n\nexp-3`, BODY, [3]],
  ["经验：", `${ZH_BODY}\n经验：exp-3`, ZH_BODY, [3]],
  ["用了经验", `${ZH_BODY}\n用了经验 exp-3`, ZH_BODY, [3]],
  ["zh comment in full-width parentheses", `${ZH_BODY}\n参考了 exp-3（那条关于 flag 的）`, ZH_BODY, [3]],
  ["Lessons:", `${BODY}\nLessons: exp-3`, BODY, [3]],
  ["References:", `${BODY}\nReferences: exp-3, exp-7`, BODY, [3, 7]],
  ["Lessons referenced:", `${BODY}\nLessons referenced: exp-3`, BODY, [3]],
  ["a phantom id", `${BODY}\nLessons used: exp-999 (the flag one)`, BODY, [999]],
];

/** Wrapped ids with no label: [case, answer, the loop on, what the user sees, ids cited]. */
const UNLABELLED: [string, string, boolean, string, number[]][] = [
  // Shown or not (a phantom, which the caller counts as one): where citations stand, it is one.
  ["at the end", `${BODY} [exp-3]`, true, BODY, [3]],
  ["the loop off: nobody asked for a citation", `${BODY} \`exp-3\``, false, `${BODY} \`exp-3\``, []],
  ["a list at the end", `${BODY} [exp-3, exp-999]`, true, BODY, [3, 999]],
  ["a line of its own mid-answer", `${BODY}\n\n[exp-3]\n\nBye.`, true, `${BODY}\n\nBye.`, [3]],
  ["a list item of its own", `${BODY}\n- \`exp-3\``, true, BODY, [3]],
  ["several at the end", `${BODY} \`exp-3\`, \`exp-7\``, true, BODY, [3, 7]],
  ["inline code mid-sentence", "Run `exp-1` reached 0.91, `exp-2` only 0.85.", true, "", []],
  ["a table cell", "| run | score |\n|---|---|\n| `exp-1` | 0.91 |", true, "", []],
  ["a table cell, brackets", "| [exp-1] |", true, "", []],
  ["a link's text", "See [exp-7](https://example.com/runs/exp-7) for details.", true, "", []],
  ["a link's text ending the answer", "See [exp-7](https://example.com/runs/exp-7)", true, "", []],
  ["a link's target ending the answer", "See [the run](exp-7)", true, "", []],
  ["a reference link", "See [exp-7][1].\n\n[1]: https://example.com", true, "", []],
  ["a parenthesis in prose", "The runs (exp-1 and exp-2) converged.", true, "", []],
  ["inline code after a word ending the answer", "Switch to it:\ngit checkout `exp-12`", true, "", []],
  ["inline code in zh prose", "运行 `exp-3` 的结果最好", true, "", []],
  ["inline code ending zh prose", "最好的是运行 `exp-3`", true, "", []],
  ["indented code", "Run:\n\n    git checkout [exp-3]", true, "", []],
  ["indented code with a tab", "Run:\n\n\t(exp-3)", true, "", []],
  ["fenced code", "Run:\n```\n[exp-3]\n```", true, "", []],
  ["a bracket mid-answer, not on its own line", "See [exp-3] for the run.\nThen retry.", true, "", []],
];

/** Answers no citation was found in, whatever was shown: returned byte for byte. */
const PROSE_WITH_LABEL_WORDS: [string, string][] = [
  ["References: RFC 9110", "References: RFC 9110"],
  ["References with a link", "See the spec.\nReferences: RFC 9110, section 15"],
  ["Lessons in prose", "Key lessons: exp-3 was the baseline."],
  ["Lessons without a colon", "Lessons exp-3 taught us: restart first."],
  ["参考了 followed by prose", "参考了 exp-3 的做法，先停服务。"],
  ["经验 in prose", "他的经验：exp-3 那次很有用。"],
  ["a leading indent kept", "    indented first line\nsecond"],
];

describe("citations as models write them", () => {
  it.each(FORMS)("%s", (_form, answer, shown, cited) => {
    const result = extractCitations(answer, true);
    expect(result).toEqual({ answer: shown, cited });
    expect(result.answer).not.toMatch(/exp-\d|lessons? used|used lessons|参考了|参考：|使用的经验/i);
  });

  it.each(UNCHANGED)("leaves alone: %s", (_case, answer) => {
    expect(extractCitations(answer)).toEqual({ answer, cited: [] });
    expect(extractCitations(answer, true)).toEqual({ answer, cited: [] });
  });

  it.each(LABELLED_LEAKS)("strips a labelled citation: %s", (_case, answer, shown, cited) => {
    for (const loopOn of [false, true]) {
      const result = extractCitations(answer, loopOn);
      expect(result).toEqual({ answer: shown, cited });
      expect(result.answer).not.toMatch(/exp-\d|lessons?|references|参考|经验|flag one|<|✅/i);
    }
  });

  it.each(UNLABELLED)("unlabelled wrapped ids: %s", (_case, answer, loopOn, seen, cited) => {
    expect(extractCitations(answer, loopOn)).toEqual({ answer: seen || answer, cited });
    // With the loop off (nobody asked the model to cite) no unlabelled id is a citation.
    expect(extractCitations(answer)).toEqual({ answer, cited: [] });
  });

  it("reads the answer's last line as it stands once a labelled citation under it is gone", () => {
    const answer = `${BODY} 【exp-3】\nLessons used: exp-7`;
    expect(extractCitations(answer, true)).toEqual({ answer: BODY, cited: [3, 7] });
    expect(extractCitations(answer)).toEqual({ answer: `${BODY} 【exp-3】`, cited: [7] });
  });

  it.each(PROSE_WITH_LABEL_WORDS)("leaves alone: %s", (_case, answer) => {
    expect(extractCitations(answer, true)).toEqual({ answer, cited: [] });
  });

  it("keeps what the model wrote around a removed citation: a code indent, its own blank lines", () => {
    expect(extractCitations("    indented code\nLessons used: exp-3").answer).toBe("    indented code");
    expect(extractCitations("\tcode\n\nLessons used: exp-3\n").answer).toBe("\tcode\n");
    expect(extractCitations("Lessons used: exp-3\n\n    code").answer).toBe("    code");
    expect(extractCitations("Lessons used: exp-3")).toEqual({ answer: "", cited: [3] });
  });

  it("with distillation off, an answer mentioning `exp-1` in backticks reaches the user unchanged", async () => {
    const turn = { env: { options: {} } } as unknown as TurnContext;
    for (const answer of ["Compare with `exp-1`.", "Run `exp-1` reached 0.91.", "Done.\n`exp-1`"])
      expect(await withoutCitations(turn, answer)).toBe(answer);
    expect(await withoutCitations(turn, "Done.\nLessons used: exp-1")).toBe("Done.");
  });

  it("removes a citation after a code block but never touches the block", () => {
    const answer = "Run:\n```sh\necho 'Lessons used: exp-3' [exp-9]\n```\n**Lessons used:** exp-3";
    expect(extractCitations(answer)).toEqual({
      answer: "Run:\n```sh\necho 'Lessons used: exp-3' [exp-9]\n```",
      cited: [3],
    });
  });

  it("counts every id it reads, shown or not (the caller counts the phantoms)", () => {
    expect(extractCitations("Done.\n**Lessons used:** exp-3, exp-999999").cited).toEqual([3, 999_999]);
  });

  it("drops the lessons section and every citation from text for the distiller", () => {
    expect(
      withoutLessonLines(
        "a\n═══ Lessons from earlier tasks ═══\n[exp-000001] lesson text\nb [exp-1]\n**Lessons used:** exp-1\n参考了：exp-1",
      ),
    ).toBe("a\nb");
  });

  it("stays linear on 100 kB adversarial lines", () => {
    const size = 100_000;
    const fill = (unit: string) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
    const adversarial = [
      `Lessons used: exp-1${" ".repeat(size)}x`,
      `Lessons used: ${fill("exp-1 , ")}x`,
      `Lessons used: ${fill("exp-1 and ")}x`,
      `${fill("Lessons used: ")}x`,
      `${fill("Lessons used: exp-1 x ")}`,
      `${fill("参考了：")}x`,
      `${fill("[exp-1 , ")}x`,
      `${fill("(Lessons used: exp-1 ")}x`,
      `${fill("[[[[exp-")}x`,
      `Lessons used: exp-${"1".repeat(size)}x`,
      `${fill("a. ")} lessons used: x`,
      `${fill("`exp-1")}x`,
      `${fill("Lessons used: exp-1 (c) ")}x`,
      `${fill("aLessons used: exp-1 x ")}`,
      `${fill("\u200bLessons\u200b used: ")}x`,
      `${fill("[exp-1](")}x`,
      `${fill("`exp-1` and ")}x`,
      `${fill("References: exp-1 x ")}`,
      `Lessons used:${"\n".repeat(size)}x`,
    ];
    for (const line of adversarial) {
      const result = extractCitations(`Answer.\n${line}`, true);
      expect(result.cited.length).toBeLessThanOrEqual(1);
      expect(result.answer.startsWith("Answer.")).toBe(true);
    }
    // A long real citation is still read whole.
    const ids = Array.from({ length: 10_000 }, (_, index) => `exp-${index + 1}`);
    const long = extractCitations(`Answer.\n**Lessons used:** ${ids.join(", ")}`);
    expect(long).toEqual({ answer: "Answer.", cited: ids.map((_, index) => index + 1) });
  });
});
