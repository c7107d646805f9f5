/**
 * The model says which lessons it applied on a line of its own: `Lessons used: exp-3,
 * exp-17` (or the seed's `参考了 exp-003`). The line is bookkeeping for the bot: it is
 * parsed here and removed before the user sees the answer or anything stores it.
 */
import { parseExperienceId } from "../../store/experiences-store.js";

const CITATION_LINE =
  /^[ \t>*_-]*(?:lessons? used|参考了|参考)\s*[:：]?\s*((?:exp-\d+)(?:\s*(?:,|，|、|and|和|\s)\s*exp-\d+)*)[ \t.。*_]*$/gim;

export type Citations = { answer: string; cited: number[] };

export function extractCitations(answer: string): Citations {
  const cited = new Set<number>();
  const stripped = answer.replace(CITATION_LINE, (_line, list: string) => {
    for (const id of list.match(/exp-\d+/gi) ?? []) {
      const parsed = parseExperienceId(id);
      if (parsed !== undefined) cited.add(parsed);
    }
    return "";
  });
  return { answer: stripped.replace(/\n{3,}/g, "\n\n").trim(), cited: [...cited] };
}

/** Drops citation lines and lesson lines (`[exp-…] …`) from text given to the distiller. */
export function withoutLessonLines(text: string): string {
  return text
    .split("\n")
    .filter(
      (line) => !new RegExp(CITATION_LINE.source, "i").test(line) && !/\[exp-\d+\]/i.test(line) && !/═══/.test(line),
    )
    .join("\n");
}
