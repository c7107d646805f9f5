/**
 * The ratchet on distilled skills, as pure functions. A new version replaces the active
 * one only if it covers at least as much of the tag's recorded evidence and keeps at
 * least 75% of the previous bullets; once live it is on trial for the next 10 tasks that
 * use it, and is rolled back if it does 15 points worse than the version before it.
 */
import { allBullets } from "./skill-sections.js";

export const RATCHET = { maxBulletLoss: 0.25, trialUses: 10, rollbackGap: 0.15 } as const;

function normalize(bullet: string): string {
  return bullet
    .replace(/\[exp-[^\]]*\]/gi, "")
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}-]+/gu, " ")
    .trim();
}

/** Share of the previous version's bullets that the next one drops. */
export function bulletLoss(previous: string, next: string): number {
  const before = allBullets(previous).map(normalize);
  if (before.length === 0) return 0;
  const after = new Set(allBullets(next).map(normalize));
  return before.filter((bullet) => !after.has(bullet)).length / before.length;
}

/** Lesson ids a version's bullets cite. */
export function citedLessons(content: string): Set<number> {
  return new Set(
    allBullets(content).flatMap((bullet) => (bullet.match(/exp-(\d+)/gi) ?? []).map((id) => Number(id.slice(4)))),
  );
}

/**
 * How well a version covers the tag's recorded tasks: of the tasks whose lessons are
 * known (the lessons they produced or cited), the share whose lessons the version cites.
 */
export function offlineScore(content: string, taskLessons: readonly number[][]): number {
  if (taskLessons.length === 0) return 0;
  const cited = citedLessons(content);
  return taskLessons.filter((lessons) => lessons.some((id) => cited.has(id))).length / taskLessons.length;
}

/** A refusal carries its reason for the ledger and, for people, a text key with its numbers (the locale tables word it). */
export type CandidateVerdict =
  | { accept: true }
  | {
      accept: false;
      reason: string;
      words: { key: "ratchetDropsBullets" | "ratchetCoversLess"; values: Record<string, number> };
    };

export function judgeCandidate(input: {
  candidate: string;
  active: string | undefined;
  taskLessons: readonly number[][];
}): CandidateVerdict {
  if (!input.active) return { accept: true };
  const loss = bulletLoss(input.active, input.candidate);
  if (loss > RATCHET.maxBulletLoss) {
    const values = { lost: Math.round(loss * 100), most: RATCHET.maxBulletLoss * 100 };
    return {
      accept: false,
      reason: `drops ${values.lost}% of the previous bullets (at most ${values.most}%)`,
      words: { key: "ratchetDropsBullets", values },
    };
  }
  const before = offlineScore(input.active, input.taskLessons);
  const after = offlineScore(input.candidate, input.taskLessons);
  if (after < before) {
    const values = { after: Math.round(after * 100), before: Math.round(before * 100) };
    return {
      accept: false,
      reason: `covers ${values.after}% of the recorded tasks vs ${values.before}% for the active version`,
      words: { key: "ratchetCoversLess", values },
    };
  }
  return { accept: true };
}

export type TrialVerdict = "continue" | "keep" | "rollback";

export function trialVerdict(version: {
  trialUses: number;
  trialSuccesses: number;
  baselineRate: number | null;
}): TrialVerdict {
  if (version.trialUses < RATCHET.trialUses) return "continue";
  if (version.baselineRate === null) return "keep";
  return version.trialSuccesses / version.trialUses <= version.baselineRate - RATCHET.rollbackGap ? "rollback" : "keep";
}
