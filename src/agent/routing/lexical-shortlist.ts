/**
 * Large catalogs are cut to a bounded shortlist before the model sees them, by lexical
 * overlap of the conversation with each skill's name and description (Chinese included).
 * Small catalogs pass whole; the fallback skill is always kept.
 */
import { overlap, terms } from "../../knowledge/keywords.js";
import type { Skill } from "../../knowledge/skill.js";

export const DEFAULT_SHORTLIST_SIZE = 20;

export function shortlistSkills(
  skills: readonly Skill[],
  query: string,
  options: { size?: number; keep?: string } = {},
): Skill[] {
  const size = options.size ?? DEFAULT_SHORTLIST_SIZE;
  const usable = skills.filter((skill) => skill.status !== "deprecated");
  if (usable.length <= size) return usable;
  const queryTerms = terms(query);
  const scored = usable.map((skill, index) => ({
    skill,
    index,
    score: overlap(queryTerms, terms(`${skill.name.replace(/-/g, " ")} ${skill.description}`)),
  }));
  scored.sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen = scored.slice(0, size).map((entry) => entry.skill);
  const kept = options.keep ? usable.find((skill) => skill.name === options.keep) : undefined;
  if (kept && !chosen.includes(kept)) chosen[chosen.length - 1] = kept;
  return chosen;
}
