/**
 * Which lessons a task is shown: relevance first (tag or term overlap with the message,
 * a gate that confidence and recency cannot override), then confidence, adoption and
 * recency; at most two active lessons plus one draft in an explore slot, so drafts can
 * earn the citations promotion needs. A lesson whose text fails the write-time checks
 * today (the checks may have grown), or is held and was never approved, is skipped.
 */
import { terms } from "../../knowledge/keywords.js";
import type { Experience } from "../../store/experiences-store.js";
import { isConflicting, jaccard, lessonMayBeShown } from "./lesson-rules.js";

export const MAX_ACTIVE_INJECTED = 2;
export const MAX_DRAFT_INJECTED = 1;
/** Term overlap (Jaccard) a lesson needs with the message. */
export const RELEVANCE_JACCARD = 0.2;
/** Share of a lesson's tags the message must contain when terms alone do not overlap enough. */
export const RELEVANCE_TAG_SHARE = 0.5;

export type ScoredLesson = { lesson: Experience; relevance: number };

export function relevance(messageTerms: ReadonlySet<string>, lesson: Experience): number {
  const lessonTerms = terms(`${lesson.tags.join(" ")} ${lesson.summary}`);
  const byTerms = jaccard(messageTerms, lessonTerms);
  const tagTerms = lesson.tags.flatMap((tag) => tag.split("-")).filter(Boolean);
  const tagShare = tagTerms.length === 0 ? 0 : tagTerms.filter((tag) => messageTerms.has(tag)).length / tagTerms.length;
  return Math.max(byTerms >= RELEVANCE_JACCARD ? byTerms : 0, tagShare >= RELEVANCE_TAG_SHARE ? tagShare : 0);
}

export function selectLessons(userText: string, lessons: readonly Experience[]): ScoredLesson[] {
  const messageTerms = terms(userText);
  const scored = lessons
    .filter((lesson) => lesson.status !== "deprecated" && lessonMayBeShown(lesson))
    .map((lesson) => ({ lesson, relevance: relevance(messageTerms, lesson) }))
    .filter((candidate) => candidate.relevance > 0)
    .sort(compareCandidates);
  const active = scored.filter((candidate) => candidate.lesson.status === "active").slice(0, MAX_ACTIVE_INJECTED);
  // A draft that contradicts a shown active lesson would only confuse the task; it waits.
  const draft = scored
    .filter(
      (candidate) =>
        candidate.lesson.status === "draft" &&
        !active.some((shown) => isConflicting(shown.lesson.summary, candidate.lesson.summary)),
    )
    .slice(0, MAX_DRAFT_INJECTED);
  return [...active, ...draft];
}

function adoption(lesson: Experience): number {
  return lesson.injectedCount === 0 ? 0 : lesson.usageCount / lesson.injectedCount;
}

function compareCandidates(left: ScoredLesson, right: ScoredLesson): number {
  // Relevance in coarse steps, so a small relevance edge does not beat real confidence.
  const band = (value: number) => Math.round(value * 10);
  return (
    band(right.relevance) - band(left.relevance) ||
    Number(right.lesson.pinned) - Number(left.lesson.pinned) ||
    right.lesson.confidence - left.lesson.confidence ||
    adoption(right.lesson) - adoption(left.lesson) ||
    right.lesson.updatedAt - left.lesson.updatedAt ||
    left.lesson.id - right.lesson.id
  );
}
