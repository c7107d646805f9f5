/**
 * Runs every arm on every seed (identical task streams per seed) and summarises: the
 * last window's success and its learning curve per arm, repeat failures, how many
 * injections a harmful lesson survives, the effect report's estimate against the true
 * effect (from the scripted agent's closed form), and a digest of the whole result.
 */
import { createHash } from "node:crypto";
import { ARMS, runArm, type Arm, type ArmResult } from "./run-arm.js";
import { WORLD } from "./world.js";

export type ArmSummary = {
  lastWindowSuccess: number;
  repeatFailureRate: number;
  curve: number[];
  lessonsCreated: number;
  lessonsDeprecated: number;
};

export type EvalResult = {
  seeds: number;
  tasks: number;
  arms: Record<Arm, ArmSummary>;
  fullVsNone: { lastWindowGain: number; interval: [number, number] };
  harmful: { maxInjectionsToDeprecate: number; lessons: number; notDeprecated: number };
  report: { estimatedEffect: number; trueEffect: number };
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
  const mean = (values: number[]) =>
    values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
  const windows = Math.ceil(tasks / WORLD.window);
  const summary = {} as Record<Arm, ArmSummary>;
  for (const arm of ARMS) {
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
    };
  }
  // Paired by seed: the arms saw the same tasks and the same luck.
  const gains = of("full").map(
    (run) =>
      lastWindow(run, tasks) - lastWindow(of("none").find((other) => other.seed === run.seed) as ArmResult, tasks),
  );
  const sd = Math.sqrt(
    mean(gains.map((gain) => (gain - mean(gains)) ** 2)) * (gains.length / Math.max(1, gains.length - 1)),
  );
  const half = gains.length > 1 ? (1.96 * sd) / Math.sqrt(gains.length) : 0;
  const harmful = of("full")
    .flatMap((run) => run.harmful)
    .filter((lesson) => lesson.injectionsBeforeDeprecation > 0);
  const eligible = of("full").flatMap((run) => run.eligible);
  // The estimate is the product's own effect report, pooled over seeds.
  const rateOf = (arm: "treatment" | "holdout") => {
    const counts = of("full").flatMap((run) => (run.report ? [run.report[arm]] : []));
    return (
      counts.reduce((sum, count) => sum + count.successes, 0) /
      Math.max(
        1,
        counts.reduce((sum, count) => sum + count.n, 0),
      )
    );
  };
  const withoutDigest = {
    seeds,
    tasks,
    arms: summary,
    fullVsNone: {
      lastWindowGain: round(mean(gains)),
      interval: [round(mean(gains) - half), round(mean(gains) + half)] as [number, number],
    },
    harmful: {
      maxInjectionsToDeprecate: Math.max(0, ...harmful.map((lesson) => lesson.injectionsBeforeDeprecation)),
      lessons: harmful.length,
      notDeprecated: harmful.filter((lesson) => !lesson.deprecated).length,
    },
    report: {
      estimatedEffect: round(rateOf("treatment") - rateOf("holdout")),
      trueEffect: round(mean(eligible.map((task) => task.trueEffect))),
    },
    citationLeaks: results.reduce((sum, run) => sum + run.citationLeaks, 0),
    databaseDigests: createHash("sha256")
      .update(results.map((run) => `${run.arm}:${run.seed}:${run.databaseDigest}`).join("\n"))
      .digest("hex"),
  };
  void arms;
  return { ...withoutDigest, digest: createHash("sha256").update(JSON.stringify(withoutDigest)).digest("hex") };
}

function windowRate(values: boolean[]): number {
  return values.length === 0 ? 0 : values.filter(Boolean).length / values.length;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
