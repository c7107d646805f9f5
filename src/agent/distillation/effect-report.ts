/**
 * The effect report: does showing lessons help? Treatment tasks (shown their lessons)
 * against holdout tasks (lessons chosen, not shown) — a causal comparison because the
 * holdout is decided by a hash, not by anything about the task. Differences come with a
 * 95% interval; under 10 tasks in either group the report says "insufficient data".
 * Outcomes, not citations, drive it: only tasks that ended with an outcome count (an
 * environment failure is evidence for nothing); per lesson, its uses and their success
 * rate against the holdout on its tags are what the lifecycle judges by, and its
 * citations are a hint.
 */
import { formatExperienceId } from "../../store/experiences-store.js";
import type { TaskOutcomeKind } from "../../store/injections-store.js";
import type { Store } from "../../store/store.js";
import { tagHoldout } from "./lifecycle.js";

export const MIN_GROUP_SIZE = 10;

export type Rate = { n: number; successes: number; rate: number | null };
export type Comparison = {
  treatment: Rate;
  holdout: Rate;
  effect: number | null;
  interval: [number, number] | null;
  verdict: string;
};

export type EffectReport = {
  agentId: string;
  overall: Comparison;
  byTag: ({ tag: string } & Comparison)[];
  lessons: {
    id: string;
    status: string;
    summary: string;
    injected: number;
    cited: number;
    adoption: number | null;
    citingSuccess: Rate;
    comparison: Comparison;
    /** Its uses (tasks it was shown to that ended with an outcome) and how many succeeded: the evidence. */
    uses: Rate;
    /** Cited uses that succeeded (what promotion needs, with a success rate above the holdout's). */
    citedSuccesses: number;
    /** The holdout the lifecycle compares it with: the holdout tasks on its tags. */
    tagHoldout: Rate;
  }[];
  /** How the tasks ended, by kind (an `environment` task has no outcome). */
  outcomeKinds: Partial<Record<TaskOutcomeKind, number>>;
  phantomCitations: number;
  created: number;
  promoted: number;
  deprecated: number;
  distillCalls: number;
  skipped: number;
  tokens: number;
};

export function rate(outcomes: readonly string[]): Rate {
  const successes = outcomes.filter((outcome) => outcome === "success").length;
  return { n: outcomes.length, successes, rate: outcomes.length === 0 ? null : successes / outcomes.length };
}

/** Difference of two proportions with a normal-approximation 95% interval. */
export function compare(treatment: Rate, holdout: Rate, minGroupSize = MIN_GROUP_SIZE): Comparison {
  if (treatment.n < minGroupSize || holdout.n < minGroupSize || treatment.rate === null || holdout.rate === null) {
    return { treatment, holdout, effect: null, interval: null, verdict: "insufficient data" };
  }
  const effect = treatment.rate - holdout.rate;
  const se = Math.sqrt(
    (treatment.rate * (1 - treatment.rate)) / treatment.n + (holdout.rate * (1 - holdout.rate)) / holdout.n,
  );
  const interval: [number, number] = [round(effect - 1.96 * se), round(effect + 1.96 * se)];
  const verdict = interval[0] > 0 ? "helps" : interval[1] < 0 ? "hurts" : "no clear effect";
  return { treatment, holdout, effect: round(effect), interval, verdict };
}

type TaskArm = { traceId: string; arm: "treatment" | "holdout"; outcome: string; experienceIds: number[] };

export async function effectReport(store: Store, agentId: string, sinceMs = 0): Promise<EffectReport> {
  const rows = (await store.injections.byAgent(agentId, sinceMs)).filter((row) => row.outcome !== null);
  const tasks = new Map<string, TaskArm>();
  for (const row of rows) {
    const task = tasks.get(row.traceId) ?? {
      traceId: row.traceId,
      arm: row.arm,
      outcome: row.outcome as string,
      experienceIds: [],
    };
    task.experienceIds.push(row.experienceId);
    tasks.set(row.traceId, task);
  }
  const runs = await store.distillRuns.byAgent(agentId, sinceMs);
  const tagsOf = new Map(runs.map((run) => [run.traceId, run.tags.split(" ").filter(Boolean)]));
  const group = (filter: (task: TaskArm) => boolean) => {
    const chosen = [...tasks.values()].filter(filter);
    return compare(
      rate(chosen.filter((task) => task.arm === "treatment").map((task) => task.outcome)),
      rate(chosen.filter((task) => task.arm === "holdout").map((task) => task.outcome)),
    );
  };
  const tags = [...new Set([...tasks.keys()].flatMap((traceId) => tagsOf.get(traceId) ?? []))].sort();
  const holdoutTasks = [...tasks.values()].filter((task) => task.arm === "holdout");
  const lessons = (await store.experiences.list(agentId)).map((lesson) => {
    const own = rows.filter((row) => row.experienceId === lesson.id);
    const treatment = own.filter((row) => row.arm === "treatment");
    const cited = treatment.filter((row) => row.cited === 1);
    const uses = rate(treatment.map((row) => row.outcome as string));
    const holdoutOnTags = tagHoldout(
      lesson,
      holdoutTasks.map((task) => ({ ...task, tags: tagsOf.get(task.traceId) ?? [] })),
    );
    return {
      id: formatExperienceId(lesson.id),
      status: lesson.status,
      summary: lesson.summary,
      injected: treatment.length,
      cited: cited.length,
      adoption: treatment.length === 0 ? null : round(cited.length / treatment.length),
      citingSuccess: rate(cited.map((row) => row.outcome as string)),
      comparison: compare(uses, rate(own.filter((row) => row.arm === "holdout").map((row) => row.outcome as string))),
      uses,
      citedSuccesses: cited.filter((row) => row.outcome === "success").length,
      tagHoldout: rate(holdoutOnTags.map((task) => task.outcome)),
    };
  });
  const outcomeKinds: Partial<Record<TaskOutcomeKind, number>> = {};
  for (const run of runs) if (run.outcomeKind) outcomeKinds[run.outcomeKind] = (outcomeKinds[run.outcomeKind] ?? 0) + 1;
  const ledger = (await store.ledger.byAgent(agentId, sinceMs)).filter((entry) => entry.subject === "experience");
  const count = (action: string) => ledger.filter((entry) => entry.action === action).length;
  return {
    agentId,
    overall: group(() => true),
    byTag: tags.map((tag) => ({ tag, ...group((task) => (tagsOf.get(task.traceId) ?? []).includes(tag)) })),
    lessons,
    outcomeKinds,
    phantomCitations: runs.reduce((sum, run) => sum + run.phantomCitations, 0),
    created: count("create"),
    promoted: count("promote"),
    deprecated: count("deprecate"),
    distillCalls: runs.filter((run) => run.status !== "skipped").length,
    skipped: runs.filter((run) => run.status === "skipped").length,
    tokens: runs.reduce((sum, run) => sum + run.tokens, 0),
  };
}

export function formatComparison(comparison: Comparison): string {
  const side = (label: string, value: Rate) => `${label} ${value.rate === null ? "-" : pct(value.rate)} (n=${value.n})`;
  const effect =
    comparison.effect === null || !comparison.interval
      ? comparison.verdict
      : `${signed(comparison.effect)} [${signed(comparison.interval[0])}, ${signed(comparison.interval[1])}] ${comparison.verdict}`;
  return `${side("treatment", comparison.treatment)} · ${side("holdout", comparison.holdout)} · effect ${effect}`;
}

/** One lesson's evidence in a line: its uses and their success against the holdout, its citations as a hint. */
export function formatLessonEvidence(lesson: EffectReport["lessons"][number]): string {
  const side = (value: Rate) => (value.rate === null ? "-" : pct(value.rate));
  return `used ${lesson.uses.n} · succeeded ${lesson.uses.successes} (${side(lesson.uses)} vs ${side(lesson.tagHoldout)} in the holdout, n=${lesson.tagHoldout.n}) · cited ${lesson.cited}, ${lesson.citedSuccesses} of them succeeded`;
}

function pct(value: number): string {
  return `${Math.round(value * 100)}%`;
}

function signed(value: number): string {
  const points = Math.round(value * 1000) / 10;
  return `${points >= 0 ? "+" : ""}${points} pts`;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
