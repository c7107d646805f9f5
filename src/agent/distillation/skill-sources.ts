/**
 * The lessons a distilled skill may be written from. A skill is shown in prompts, so only
 * lessons the read-time gate would show may feed it (never a deprecated one), and never a
 * failing one: a draft with a failed use since its last status change, or an active lesson
 * the lifecycle would deprecate now (e.g. its last 3 uses all failed). The "3 tasks of a
 * tag failed" trigger would otherwise write a harmful draft into a skill before the
 * lifecycle deprecates it.
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { lessonMayBeShown } from "./lesson-rules.js";
import { lessonStats } from "./lesson-stats.js";
import { nextTransition } from "./lifecycle.js";

export type SkillSources = {
  /** The lessons a skill may be distilled from. */
  lessons: Experience[];
  /** Live lessons of the tag left out because their uses fail, each with why. */
  failing: { lesson: Experience; why: string }[];
};

export async function skillSources(store: Store, agentId: string, tag: string, now: number): Promise<SkillSources> {
  const sources: SkillSources = { lessons: [], failing: [] };
  for (const lesson of await store.experiences.list(agentId)) {
    if (lesson.status === "deprecated" || !lesson.tags.includes(tag) || !lessonMayBeShown(lesson)) continue;
    const why = await failing(store, lesson, now);
    if (why) sources.failing.push({ lesson, why });
    else sources.lessons.push(lesson);
  }
  return sources;
}

/** Why a shown lesson is failing, or undefined when it is not. */
async function failing(store: Store, lesson: Experience, now: number): Promise<string | undefined> {
  const stats = await lessonStats(store, lesson, now);
  const uses = stats.uses ?? 0;
  const failed = uses - (stats.successes ?? 0);
  if (lesson.status === "draft" && failed > 0) return `draft, ${failed} of ${uses} uses failed`;
  // An active lesson fails when the lifecycle would deprecate it now (its own rules and exceptions).
  const transition = lesson.status === "active" ? nextTransition(lesson, stats) : undefined;
  return transition?.to === "deprecated" ? transition.reason : undefined;
}

/** The skip's reason when no lesson of the tag may feed a skill. */
export function noSourcesReason(tag: string, sources: SkillSources): string {
  if (sources.failing.length === 0) return `no live lessons tagged ${tag}`;
  const left = sources.failing.map(({ lesson, why }) => `${formatExperienceId(lesson.id)} (${why})`).join(", ");
  return `no live lessons tagged ${tag} that are not failing; left out: ${left}`;
}
