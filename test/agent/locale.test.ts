/**
 * One language per conversation: every text a person reads comes from the locale tables,
 * both tables have every key with the same placeholders, and no Chinese text carries an
 * English sentence inside it. The words for codes (model error kinds, gap reasons and
 * classes) are checked for every code, so a new code without words fails here.
 */
import { describe, expect, it } from "vitest";
import { gapClassWords, gapReasonWords, type GapReason } from "../../src/agent/gaps/classify-gap.js";
import { MODEL_ERROR_KINDS } from "../../src/llm/model-errors.js";
import { modelErrorWords, TEXT_TABLES, text, type Locale, type TextKey } from "../../src/locale/texts.js";
import { englishRun } from "../helpers/english-run.js";

const LOCALES = Object.keys(TEXT_TABLES) as Locale[];
const GAP_REASONS: GapReason[] = ["no_skill", "parse_failure", "tool_failure", "step_budget", "model_failure"];

const placeholders = (value: string) => [...value.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

describe("locale tables", () => {
  it("has an English and a Chinese table", () => {
    expect(LOCALES.sort()).toEqual(["en", "zh"]);
  });

  it("every key is in every table, with the same placeholders, and none is empty", () => {
    const keys = Object.keys(TEXT_TABLES.en).sort();
    for (const locale of LOCALES) {
      expect(Object.keys(TEXT_TABLES[locale]).sort(), locale).toEqual(keys);
      for (const key of keys as TextKey[]) {
        expect(TEXT_TABLES[locale][key].trim(), `${locale}.${key}`).not.toBe("");
        expect(placeholders(TEXT_TABLES[locale][key]), `${locale}.${key}`).toEqual(placeholders(TEXT_TABLES.en[key]));
      }
    }
  });

  it("no Chinese text holds an English sentence", () => {
    const english = (Object.keys(TEXT_TABLES.zh) as TextKey[]).flatMap((key) => {
      const run = englishRun(TEXT_TABLES.zh[key]);
      return run ? [`${key}: "${run}"`] : [];
    });
    expect(english).toEqual([]);
  });

  it("the English check finds English: the English table's sentences, and the mixes the issue reported", () => {
    // Texts of three words or more (after what may stay is removed) are sentences; the check must see each.
    const sentences = (Object.keys(TEXT_TABLES.en) as TextKey[]).filter(
      (key) =>
        TEXT_TABLES.en[key]
          .replace(/\{\w+\}|\/[a-z_]+|<[^>]*>/g, " ")
          .split(/\s+/)
          .filter((word) => /^[A-Za-z]/.test(word)).length >= 4,
    );
    expect(sentences.length).toBeGreaterThan(30);
    expect(sentences.filter((key) => englishRun(TEXT_TABLES.en[key]) === undefined)).toEqual([]);
    expect(englishRun("Nothing written: no live lessons tagged deploy")).toBeDefined();
    expect(englishRun("没有写入（rate limit）")).toBe("rate limit");
    expect(englishRun("抱歉，模型服务暂时不可用（the model server failed）。")).toBeDefined();
    // What may stay does not count.
    expect(
      englishRun(
        "请在 {envFile} 中设置 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL（`laoding experiences list`）/skill_versions <skill name here> [activate <N>]",
      ),
    ).toBeUndefined();
  });

  it("text() fills placeholders and leaves unknown ones as written", () => {
    expect(text("en", "gapsDrafted", { skill: "auto-x" })).toBe("draft auto-x");
    expect(text("zh", "skillVersionLive", { skill: "s" })).toBe("s v{version} 已生效。");
  });
});

describe("codes shown to people are words", () => {
  it("every model error kind has words in every locale, never the kind itself", () => {
    for (const locale of LOCALES) {
      const words = MODEL_ERROR_KINDS.map((kind) => modelErrorWords(locale, kind));
      expect(new Set(words).size, locale).toBe(MODEL_ERROR_KINDS.length);
      for (const [index, kind] of MODEL_ERROR_KINDS.entries())
        expect(words[index], `${locale} ${kind}`).not.toContain("_");
    }
    for (const kind of MODEL_ERROR_KINDS) expect(modelErrorWords("zh", kind)).toMatch(/[\u4e00-\u9fff]/);
  });

  it("every gap reason and class has words; a code this version does not know is shown as stored", () => {
    for (const locale of LOCALES) {
      for (const reason of GAP_REASONS) expect(gapReasonWords(locale, reason), `${locale} ${reason}`).not.toMatch(/_/);
      expect(new Set(GAP_REASONS.map((reason) => gapReasonWords(locale, reason))).size).toBe(GAP_REASONS.length);
    }
    for (const reason of GAP_REASONS) expect(gapReasonWords("zh", reason)).toMatch(/^[\u4e00-\u9fff]+$/);
    expect(gapClassWords("zh", "environment")).toBe("环境");
    expect(gapReasonWords("zh", "future_reason")).toBe("future_reason");
  });
});
