/**
 * Runs every arm on every seed (identical task streams per seed) and summarises: the
 * last window's success and its learning curve per arm, repeat failures, how many
 * injections a harmful lesson survives, the effect report's estimate against the true
 * effect (from the scripted agent's closed form), and a digest of the whole result.
 * Per learning arm: the most uses a harmful lesson survived in each seed, harmful lessons
 * never deprecated, helpful lessons deprecated, citation text that reached a user.
 */
import { createHash } from "node:crypto";
import { ARMS, LEARNING_ARMS, runArm, type Arm, type ArmResult } from "./run-arm.js";
import { WORLD } from "./world.js";

export type ArmSummary = {
  lastWindowSuccess: number;
  repeatFailureRate: number;
  curve: number[];
  lessonsCreated: number;
  lessonsDeprecated: number;
  /** Helpful (true-remedy) lessons created, deprecated when the run ended, and deprecations of them in all (some revived), all seeds together. */
  helpfulLessons: number;
  helpfulDeprecated: number;
  helpfulDeprecations: number;
  /** Answers and stored messages with citation text, all seeds together. */
  citationLeaks: number;
};

/** Harmful (wrong-remedy) lessons of one learning arm; uses are treatment injections with an outcome. */
export type HarmfulSummary = {
  /** Harmful lessons with at least one use, all seeds together. */
  lessons: number;
  notDeprecated: number;
  maxUsesToDeprecate: number;
  /** Per seed (1…N): the most uses any harmful lesson had before it was deprecated (0: none shown). */
  maxUsesBySeed: number[];
};

export type EvalResult = {
  seeds: number;
  tasks: number;
  arms: Partial<Record<Arm, ArmSummary>>;
  /** When both arms ran. */
  fullVsNone?: { lastWindowGain: number; interval: [number, number] };
  /** The full arm's harmful lessons by injections (as before), and every learning arm's by uses. */
  harmful: {
    maxInjectionsToDeprecate: number;
    lessons: number;
    notDeprecated: number;
    byArm: Partial<Record<Arm, HarmfulSummary>>;
  };
  /** When the full arm ran. */
  report?: { estimatedEffect: number; trueEffect: number };
  citationLeaks: number;
  databaseDigests: string;
  digest: string;
};

export async function runEval(
  options: { seeds?: number; tasks?: number; arms?: readonly Arm[]; onProgress?: (line: string) => void } = {},
): Promise<EvalResult> {
  const seeds = options.seeds ?? WORLD.seeds;
  const tasks = options.tasks ?? WORLD.tasks;
  const arms = options.arms ?? ARMS;
  const results: ArmResult[] = [];
  for (let seed = 1; seed <= seeds; seed += 1) {
    for (const arm of arms) {
      results.push(await runArm(arm, seed, { tasks }));
      options.onProgress?.(`seed ${seed} ${arm}: last window ${round(lastWindow(results.at(-1) as ArmResult, tasks))}`);
    }
  }
  return summarise(results, seeds, tasks, arms);
}

function lastWindow(result: ArmResult, tasks: number): number {
  const window = result.successes.slice(Math.max(0, tasks - WORLD.window));
  return window.filter(Boolean).length / Math.max(1, window.length);
}

export function summarise(results: ArmResult[], seeds: number, tasks: number, arms: readonly Arm[]): EvalResult {
  const of = (arm: Arm) => results.filter((result) => result.arm === arm);
  const windows = Math.ceil(tasks / WORLD.window);
  const summary: Partial<Record<Arm, ArmSummary>> = {};
  const byArm: Partial<Record<Arm, HarmfulSummary>> = {};
  for (const arm of ARMS.filter((candidate) => arms.includes(candidate))) {
    const runs = of(arm);
    summary[arm] = {
      lastWindowSuccess: round(mean(runs.map((run) => lastWindow(run, tasks)))),
      repeatFailureRate: round(
        runs.reduce((sum, run) => sum + run.repeatFailures, 0) /
          Math.max(
            1,
            runs.reduce((sum, run) => sum + run.revealedTrapTasks, 0),
          ),
      ),
      curve: Array.from({ length: windows }, (_, index) =>
        round(
          mean(runs.map((run) => windowRate(run.successes.slice(index * WORLD.window, (index + 1) * WORLD.window)))),
        ),
      ),
      lessonsCreated: round(mean(runs.map((run) => run.lessons.created))),
      lessonsDeprecated: round(mean(runs.map((run) => run.lessons.deprecated))),
      helpfulLessons: runs.reduce((sum, run) => sum + run.helpful.length, 0),
      helpfulDeprecated: runs.reduce((sum, run) => sum + run.helpful.filter((lesson) => lesson.deprecated).length, 0),
      helpfulDeprecations: runs.reduce(
        (sum, run) => sum + run.helpful.reduce((count, lesson) => count + lesson.deprecations, 0),
        0,
      ),
      citationLeaks: runs.reduce((sum, run) => sum + run.citationLeaks, 0),
    };
    if (LEARNING_ARMS.includes(arm)) byArm[arm] = harmfulSummary(runs);
  }
  const withoutDigest = {
    seeds,
    tasks,
    arms: summary,
    ...(arms.includes("full") && arms.includes("none")
      ? { fullVsNone: fullVsNone(of("full"), of("none"), tasks) }
      : {}),
    harmful: { ...fullHarmful(of("full")), byArm },
    ...(arms.includes("full") ? { report: effect(of("full")) } : {}),
    citationLeaks: results.reduce((sum, run) => sum + run.citationLeaks, 0),
    databaseDigests: createHash("sha256")
      .update(results.map((run) => `${run.arm}:${run.seed}:${run.databaseDigest}`).join("\n"))
      .digest("hex"),
  };
  return { ...withoutDigest, digest: createHash("sha256").update(JSON.stringify(withoutDigest)).digest("hex") };
}

function harmfulSummary(runs: ArmResult[]): HarmfulSummary {
  const shown = runs.flatMap((run) => run.harmful).filter((lesson) => lesson.uses > 0);
  const maxUsesBySeed = runs.map((run) => Math.max(0, ...run.harmful.map((lesson) => lesson.usesBeforeDeprecation)));
  return {
    lessons: shown.length,
    notDeprecated: shown.filter((lesson) => !lesson.deprecated).length,
    maxUsesToDeprecate: Math.max(0, ...maxUsesBySeed),
    maxUsesBySeed,
  };
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

function fullVsNone(full: ArmResult[], none: ArmResult[], tasks: number): NonNullable<EvalResult["fullVsNone"]> {
  // Paired by seed: the arms saw the same tasks and the same luck.
  const gains = full.map(
    (run) => lastWindow(run, tasks) - lastWindow(none.find((other) => other.seed === run.seed) as ArmResult, tasks),
  );
  const sd = Math.sqrt(
    mean(gains.map((gain) => (gain - mean(gains)) ** 2)) * (gains.length / Math.max(1, gains.length - 1)),
  );
  const half = gains.length > 1 ? (1.96 * sd) / Math.sqrt(gains.length) : 0;
  return {
    lastWindowGain: round(mean(gains)),
    interval: [round(mean(gains) - half), round(mean(gains) + half)],
  };
}

function fullHarmful(full: ArmResult[]): Omit<EvalResult["harmful"], "byArm"> {
  const harmful = full.flatMap((run) => run.harmful).filter((lesson) => lesson.injectionsBeforeDeprecation > 0);
  return {
    maxInjectionsToDeprecate: Math.max(0, ...harmful.map((lesson) => lesson.injectionsBeforeDeprecation)),
    lessons: harmful.length,
    notDeprecated: harmful.filter((lesson) => !lesson.deprecated).length,
  };
}

/** The product's own effect report, pooled over seeds, against the closed-form true effect. */
function effect(full: ArmResult[]): NonNullable<EvalResult["report"]> {
  const rateOf = (arm: "treatment" | "holdout") => {
    const counts = full.flatMap((run) => (run.report ? [run.report[arm]] : []));
    return (
      counts.reduce((sum, count) => sum + count.successes, 0) /
      Math.max(
        1,
        counts.reduce((sum, count) => sum + count.n, 0),
      )
    );
  };
  return {
    estimatedEffect: round(rateOf("treatment") - rateOf("holdout")),
    trueEffect: round(mean(full.flatMap((run) => run.eligible).map((task) => task.trueEffect))),
  };
}

function windowRate(values: boolean[]): number {
  return values.length === 0 ? 0 : values.filter(Boolean).length / values.length;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
