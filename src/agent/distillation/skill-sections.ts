/**
 * The sections of a distilled skill (SKILL.md): decision heuristics, anti-patterns and
 * honest limits, in Chinese or English, every bullet citing its source lessons.
 */
import type { Locale } from "../texts.js";

export type DistilledSection = "heuristics" | "antiPatterns" | "limits";

export const DISTILLED_SECTIONS: Record<Locale, Record<DistilledSection, string>> = {
  zh: { heuristics: "决策启发式", antiPatterns: "反模式", limits: "诚实边界" },
  en: { heuristics: "Decision heuristics", antiPatterns: "Anti-patterns", limits: "Honest limits" },
};

/** Bullets (`- ...`) under one section heading, in either language. */
export function skillBullets(text: string, section: DistilledSection): string[] {
  const titles = new Set([DISTILLED_SECTIONS.zh[section], DISTILLED_SECTIONS.en[section]]);
  const bullets: string[] = [];
  let inside = false;
  for (const line of text.split("\n")) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) inside = titles.has(heading[1] as string);
    else if (inside && /^\s*[-*]\s+\S/.test(line)) bullets.push(line.replace(/^\s*[-*]\s+/, "").trim());
  }
  return bullets;
}

/** Every bullet of every section. */
export function allBullets(text: string): string[] {
  return (["heuristics", "antiPatterns", "limits"] as const).flatMap((section) => skillBullets(text, section));
}
