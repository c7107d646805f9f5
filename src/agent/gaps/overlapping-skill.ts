/** Whether a skill the agent has already covers a gap cluster's intent (then the cluster is linked to it, not drafted again). */
import { overlap, terms } from "../../knowledge/keywords.js";
import type { Skill } from "../../knowledge/skill.js";

/** How much of a cluster's intent words a skill must cover to count as the same know-how. */
export const LINK_OVERLAP = 0.6;

/** A non-fallback skill whose name and description cover the intent's words. */
export function overlappingSkill(skills: readonly Skill[], intentKey: string): Skill | undefined {
  const intentTerms = terms(intentKey.replace(/-/g, " "));
  if (intentTerms.size === 0) return undefined;
  let best: { skill: Skill; score: number } | undefined;
  for (const skill of skills) {
    if (skill.name === "skill-builder" || skill.status === "deprecated") continue;
    const score = overlap(intentTerms, terms(`${skill.name.replace(/-/g, " ")} ${skill.description}`));
    if (score >= LINK_OVERLAP && (!best || score > best.score)) best = { skill, score };
  }
  return best?.skill;
}
