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

/** Lesson ids a bullet cites (`[exp-000012]`, `exp-12`). */
export function bulletLessonIds(bullet: string): number[] {
  return (bullet.match(/exp-(\d+)/gi) ?? []).map((id) => Number(id.slice(4)));
}

/**
 * The text without the bullets of its sections that cite only `dead` lessons (with their
 * indented continuation lines); a bullet that also cites a live lesson stays, its citation
 * brackets without the dead ids. Returns the dropped bullets too.
 */
export function withoutDeadBullets(text: string, dead: ReadonlySet<number>): { text: string; dropped: string[] } {
  const titles = new Set(Object.values(DISTILLED_SECTIONS).flatMap((locale) => Object.values(locale)));
  const kept: string[] = [];
  const dropped: string[] = [];
  let inside = false;
  let dropping = false;
  for (const line of text.split("\n")) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) inside = titles.has(heading[1] as string);
    if (!heading && inside && /^\s*[-*]\s+\S/.test(line)) {
      const ids = bulletLessonIds(line);
      dropping = ids.length > 0 && ids.every((id) => dead.has(id));
      if (dropping) dropped.push(line.replace(/^\s*[-*]\s+/, "").trim());
      else kept.push(withoutDeadCitations(line, dead));
      continue;
    }
    if (dropping && /^\s+\S/.test(line)) continue;
    dropping = false;
    kept.push(line);
  }
  return { text: kept.join("\n"), dropped };
}

/** `[exp-000001, exp-000002]` with exp-000002 dead: `[exp-000001]`; a bracket of dead ids only goes. */
function withoutDeadCitations(line: string, dead: ReadonlySet<number>): string {
  const next = line.replace(/\[([^\]\n]*)\]/g, (whole, inner: string) => {
    if (!/^\s*exp-\d+(\s*[,，;、]\s*exp-\d+)*\s*$/i.test(inner)) return whole;
    const ids = inner.match(/exp-\d+/gi) ?? [];
    const live = ids.filter((id) => !dead.has(Number(id.slice(4))));
    if (live.length === ids.length) return whole;
    return live.length === 0 ? "" : `[${live.join(", ")}]`;
  });
  return next === line ? line : next.replace(/\s+$/, "");
}
