/**
 * A lesson's lifecycle as a pure function of its counters, its injection log and a
 * clock: draft -> active when it is cited in enough distinct tasks; active or draft ->
 * deprecated when it is shown and ignored, contradicted, or when the tasks that cite it
 * do clearly worse than the holdout. Being left out of prompts is never evidence of
 * staleness. Pinned and manual lessons are exempt. The caller applies and ledgers.
 */
import type { Experience, ExperienceStatus } from "../../store/experiences-store.js";

export const LIFECYCLE = {
  promoteMinCitedTasks: 2,
  promoteMinAdoption: 0.5,
  staleWindowMs: 30 * 24 * 3_600_000,
  staleMinInjections: 3,
  lowAdoption: 0.2,
  lowAdoptionMinInjections: 5,
  draftIgnoredMinInjections: 8,
  harmfulGap: 0.2,
  harmfulMinN: 6,
  contradictionsToDeprecate: 2,
  failedCitingTasks: 3,
} as const;

/** What the log says about one lesson since it last entered its status. */
export type LessonStats = {
  injected: number;
  cited: number;
  citedTasks: number;
  /** Treatment injections and citations within the stale window. */
  injectedRecent: number;
  citedRecent: number;
  /** Tasks that cited it, with an outcome. */
  citing: { n: number; successes: number };
  /** Holdout tasks on its tags, with an outcome. */
  holdout: { n: number; successes: number };
  /** An active lesson that gives conflicting advice (same words, other flag or number), if any. */
  conflictingActive?: string;
};

export type Transition = { to: ExperienceStatus; action: "promote" | "deprecate"; reason: string };

export function nextTransition(
  lesson: Pick<Experience, "status" | "pinned" | "source" | "supportCount" | "contradictCount">,
  stats: LessonStats,
): Transition | undefined {
  if (lesson.pinned || lesson.source === "manual" || lesson.status === "deprecated") return undefined;
  const adoption = stats.injected === 0 ? 0 : stats.cited / stats.injected;
  if (lesson.contradictCount >= LIFECYCLE.contradictionsToDeprecate && lesson.contradictCount > lesson.supportCount) {
    return {
      to: "deprecated",
      action: "deprecate",
      reason: `contradicted ${lesson.contradictCount} times, supported ${lesson.supportCount}`,
    };
  }
  // A contradicted lesson whose every citing task failed: the evidence is already in.
  if (lesson.contradictCount >= 1 && stats.citing.n >= LIFECYCLE.failedCitingTasks && stats.citing.successes === 0) {
    return {
      to: "deprecated",
      action: "deprecate",
      reason: `contradicted, and all ${stats.citing.n} tasks that cited it failed`,
    };
  }
  if (stats.citing.n >= LIFECYCLE.harmfulMinN && stats.holdout.n >= LIFECYCLE.harmfulMinN) {
    const citingRate = stats.citing.successes / stats.citing.n;
    const holdoutRate = stats.holdout.successes / stats.holdout.n;
    if (citingRate <= holdoutRate - LIFECYCLE.harmfulGap) {
      return {
        to: "deprecated",
        action: "deprecate",
        reason: `tasks citing it succeed ${pct(citingRate)} vs ${pct(holdoutRate)} in the holdout`,
      };
    }
  }
  if (lesson.status === "draft") {
    // Only a draft the evidence already went against: a good draft is never retired by a conflicting active one.
    if (stats.conflictingActive && lesson.contradictCount >= 1)
      return {
        to: "deprecated",
        action: "deprecate",
        reason: `conflicts with ${stats.conflictingActive}, which evidence promoted`,
      };
    if (stats.citedTasks >= LIFECYCLE.promoteMinCitedTasks && adoption > LIFECYCLE.promoteMinAdoption) {
      return {
        to: "active",
        action: "promote",
        reason: `cited in ${stats.citedTasks} tasks, adoption ${pct(adoption)}`,
      };
    }
    if (stats.injected >= LIFECYCLE.draftIgnoredMinInjections && adoption < LIFECYCLE.lowAdoption) {
      return {
        to: "deprecated",
        action: "deprecate",
        reason: `draft shown ${stats.injected} times, adoption ${pct(adoption)}`,
      };
    }
    return undefined;
  }
  if (stats.injectedRecent >= LIFECYCLE.staleMinInjections && stats.citedRecent === 0) {
    return {
      to: "deprecated",
      action: "deprecate",
      reason: `shown ${stats.injectedRecent} times in 30 days and never cited`,
    };
  }
  if (stats.injected >= LIFECYCLE.lowAdoptionMinInjections && adoption < LIFECYCLE.lowAdoption) {
    return {
      to: "deprecated",
      action: "deprecate",
      reason: `adoption ${pct(adoption)} over ${stats.injected} injections`,
    };
  }
  return undefined;
}

function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}
