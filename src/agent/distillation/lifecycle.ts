/**
 * A lesson's lifecycle as a pure function of its counters, its injection log and a
 * clock. Outcomes are the evidence: a use is a task it was shown to that ended with an
 * outcome (an environment failure is no use); a failed use counts against it whether or
 * not it was cited, a cited use that succeeded counts for it. draft -> active on cited
 * successes and a success rate above the holdout's; -> deprecated when its uses fail,
 * when it is contradicted, or (only while its uses are not succeeding) when it is shown
 * and ignored. A lesson saying a tool does not work is revalidated after 14 days. Being
 * left out of prompts is never evidence of staleness. Pinned and manual lessons are
 * exempt. The caller applies and ledgers.
 */
import type { Experience, ExperienceStatus } from "../../store/experiences-store.js";

export const LIFECYCLE = {
  /** Promotion: this many distinct cited uses that succeeded ... */
  promoteMinCitedSuccesses: 2,
  /** ... and a success rate above the holdout's when the holdout has at least this many tasks. */
  promoteMinHoldout: 3,
  /** Deprecation: the last this-many uses all failed ... */
  failedUsesToDeprecate: 3,
  /** ... unless its success over this many latest uses still beats its tags' holdout. */
  recentUses: 8,
  /** Deprecation: a success rate this far under the holdout's, with at least these many uses and holdout tasks. */
  harmfulGap: 0.2,
  harmfulMinUses: 4,
  harmfulMinN: 6,
  /** The adoption rules retire only a lesson whose uses succeed at most this often (or less than the holdout's). */
  adoptionRetireMaxSuccess: 0.5,
  staleWindowMs: 30 * 24 * 3_600_000,
  staleMinInjections: 3,
  lowAdoption: 0.2,
  lowAdoptionMinInjections: 5,
  draftIgnoredMinInjections: 8,
  contradictionsToDeprecate: 2,
  failedCitingTasks: 3,
  /** An active lesson saying a tool or command does not work goes back to draft after this long. */
  negativeClaimMaxAgeMs: 14 * 24 * 3_600_000,
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
  /** Its uses: treatment tasks that ended with an outcome, and how many succeeded. */
  uses?: number;
  successes?: number;
  /** Distinct cited uses that succeeded. */
  citedSuccesses?: number;
  /** How many of its latest uses failed in a row. */
  trailingFailures?: number;
  /** Its latest uses (LIFECYCLE.recentUses at most), and how many succeeded. */
  recent?: { n: number; successes: number };
  /** How long it has been in its status (ms). */
  statusAgeMs?: number;
  /** Its last status change was a revalidation: its next use decides. */
  revalidating?: boolean;
  /** Its text says a tool or command does not work. */
  negativeClaim?: boolean;
  /** An active lesson that gives conflicting advice (same words, other flag or number), if any. */
  conflictingActive?: string;
};

export type Transition = {
  to: ExperienceStatus;
  action: "promote" | "deprecate" | "revalidate";
  reason: string;
};

type LessonState = Pick<Experience, "status" | "pinned" | "source" | "supportCount" | "contradictCount">;

const deprecate = (reason: string): Transition => ({ to: "deprecated", action: "deprecate", reason });

export function nextTransition(lesson: LessonState, stats: LessonStats): Transition | undefined {
  if (lesson.pinned || lesson.source === "manual" || lesson.status === "deprecated") return undefined;
  return (
    contradicted(lesson, stats) ??
    failingUses(stats) ??
    revalidation(lesson, stats) ??
    (lesson.status === "draft" ? draftTransition(stats) : activeTransition(stats))
  );
}

function contradicted(lesson: LessonState, stats: LessonStats): Transition | undefined {
  if (lesson.contradictCount >= LIFECYCLE.contradictionsToDeprecate && lesson.contradictCount > lesson.supportCount)
    return deprecate(`contradicted ${lesson.contradictCount} times, supported ${lesson.supportCount}`);
  // A contradicted lesson whose every citing task failed: the evidence is already in.
  if (lesson.contradictCount >= 1 && stats.citing.n >= LIFECYCLE.failedCitingTasks && stats.citing.successes === 0)
    return deprecate(`contradicted, and all ${stats.citing.n} tasks that cited it failed`);
  // Only a draft the evidence already went against: a good draft is never retired by a conflicting active one.
  if (lesson.status === "draft" && stats.conflictingActive && lesson.contradictCount >= 1)
    return deprecate(`conflicts with ${stats.conflictingActive}, which evidence promoted`);
  return undefined;
}

/** Outcomes against it: its last uses all failed, or it does clearly worse than the holdout. */
function failingUses(stats: LessonStats): Transition | undefined {
  // Unless it still beats the holdout: a right remedy shown where another step keeps failing the
  // task (a family with two traps) fails with it too, and is less often right without it.
  if ((stats.trailingFailures ?? 0) >= LIFECYCLE.failedUsesToDeprecate && !beatsHoldout(stats))
    return deprecate(`its last ${LIFECYCLE.failedUsesToDeprecate} uses all failed`);
  const uses = stats.uses ?? 0;
  if (uses >= LIFECYCLE.harmfulMinUses && stats.holdout.n >= LIFECYCLE.harmfulMinN) {
    const rate = (stats.successes ?? 0) / uses;
    const holdoutRate = stats.holdout.successes / stats.holdout.n;
    if (rate <= holdoutRate - LIFECYCLE.harmfulGap)
      return deprecate(`success ${pct(rate)} with it over ${uses} uses vs ${pct(holdoutRate)} in the holdout`);
  }
  return undefined;
}

/** A negative claim is revalidated after a while: back to draft, and its next use decides. */
function revalidation(lesson: LessonState, stats: LessonStats): Transition | undefined {
  if (lesson.status === "draft" && stats.revalidating && (stats.uses ?? 0) > 0)
    return (stats.successes ?? 0) > 0
      ? { to: "active", action: "promote", reason: "revalidated by a successful task" }
      : deprecate("revalidation failed: the task it was shown to failed");
  if (lesson.status === "active" && stats.negativeClaim && (stats.statusAgeMs ?? 0) > LIFECYCLE.negativeClaimMaxAgeMs)
    return {
      to: "draft",
      action: "revalidate",
      reason: `negative claim older than ${Math.round(LIFECYCLE.negativeClaimMaxAgeMs / 86_400_000)} days; revalidating`,
    };
  return undefined;
}

function draftTransition(stats: LessonStats): Transition | undefined {
  const adoption = stats.injected === 0 ? 0 : stats.cited / stats.injected;
  const citedSuccesses = stats.citedSuccesses ?? 0;
  if (citedSuccesses >= LIFECYCLE.promoteMinCitedSuccesses) {
    const rate = successRate(stats);
    const holdoutRate =
      stats.holdout.n >= LIFECYCLE.promoteMinHoldout ? stats.holdout.successes / stats.holdout.n : null;
    if (rate !== null && (holdoutRate === null || rate > holdoutRate))
      return {
        to: "active",
        action: "promote",
        reason: `${citedSuccesses} cited uses succeeded; success ${pct(rate)} with it vs ${holdoutRate === null ? `too few holdout tasks on its tags yet (${stats.holdout.n})` : `${pct(holdoutRate)} in the holdout`}`,
      };
  }
  if (stats.injected >= LIFECYCLE.draftIgnoredMinInjections && adoption < LIFECYCLE.lowAdoption && !usesSucceed(stats))
    return deprecate(`draft shown ${stats.injected} times, adoption ${pct(adoption)}${successNote(stats)}`);
  return undefined;
}

function activeTransition(stats: LessonStats): Transition | undefined {
  if (usesSucceed(stats)) return undefined;
  const adoption = stats.injected === 0 ? 0 : stats.cited / stats.injected;
  if (stats.injectedRecent >= LIFECYCLE.staleMinInjections && stats.citedRecent === 0)
    return deprecate(`shown ${stats.injectedRecent} times in 30 days and never cited${successNote(stats)}`);
  if (stats.injected >= LIFECYCLE.lowAdoptionMinInjections && adoption < LIFECYCLE.lowAdoption)
    return deprecate(`adoption ${pct(adoption)} over ${stats.injected} injections${successNote(stats)}`);
  return undefined;
}

function successRate(stats: LessonStats): number | null {
  const uses = stats.uses ?? 0;
  return uses === 0 ? null : (stats.successes ?? 0) / uses;
}

/**
 * Adoption is a hint, outcomes are the evidence: a lesson is retired for being ignored only
 * while its uses are not succeeding (at most half succeed, or fewer than in the holdout).
 * Without a use there is no evidence either way, and nothing is retired for adoption.
 */
function usesSucceed(stats: LessonStats): boolean {
  const rate = successRate(stats);
  if (rate === null) return true;
  if (rate <= LIFECYCLE.adoptionRetireMaxSuccess) return false;
  return !(stats.holdout.n >= LIFECYCLE.harmfulMinN && rate < stats.holdout.successes / stats.holdout.n);
}

/** Its success over its latest uses is above its tags' holdout's, and that holdout has enough tasks to say so. */
function beatsHoldout(stats: LessonStats): boolean {
  const recent = stats.recent;
  if (!recent || recent.n === 0 || stats.holdout.n < LIFECYCLE.promoteMinHoldout) return false;
  return recent.successes / recent.n > stats.holdout.successes / stats.holdout.n;
}

function successNote(stats: LessonStats): string {
  const rate = successRate(stats);
  return rate === null ? "" : `; success ${pct(rate)} over ${stats.uses} uses`;
}

function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/**
 * The holdout a lesson is judged against: the holdout tasks on its own tags. Never the
 * agent's whole holdout: easy task families would make a hard family's good lesson look
 * harmful. Too few tasks on its tags is "no holdout data" (the rules that need it wait).
 */
export function tagHoldout<T extends { tags: readonly string[] }>(
  lesson: Pick<Experience, "tags">,
  holdoutTasks: readonly T[],
): T[] {
  const tags = new Set(lesson.tags);
  return holdoutTasks.filter((task) => task.tags.some((tag) => tags.has(tag)));
}
