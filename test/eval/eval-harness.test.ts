/**
 * A small, fast subset of `npm run eval`: one seed, a short stream, the real orchestrator,
 * store and loop with the scripted agent and distiller.
 */
import { describe, expect, it } from "vitest";
import { summarise } from "../../eval/harness.js";
import { runArm, type ArmResult } from "../../eval/run-arm.js";

const TASKS = 150;

describe("efficacy harness (subset)", () => {
  it("the full loop beats no memory, the placebo gains nothing, no citation line reaches a user, and harmful lessons are deprecated", async () => {
    const results: ArmResult[] = [];
    for (const arm of ["none", "full", "placebo"] as const) results.push(await runArm(arm, 3, { tasks: TASKS }));
    const summary = summarise(results, 1, TASKS, ["none", "full", "placebo"]);
    expect(summary.arms.full.lastWindowSuccess - summary.arms.none.lastWindowSuccess).toBeGreaterThan(0.15);
    expect(summary.arms.full.repeatFailureRate).toBeLessThanOrEqual(summary.arms.none.repeatFailureRate / 2);
    expect(summary.arms.placebo.lastWindowSuccess).toBeLessThanOrEqual(summary.arms.none.lastWindowSuccess);
    expect(summary.citationLeaks).toBe(0);
    const full = results[1] as ArmResult;
    expect(full.lessons.created).toBeGreaterThan(0);
    const shown = full.harmful.filter((lesson) => lesson.injectionsBeforeDeprecation > 0);
    expect(shown.length).toBeGreaterThan(0);
    for (const harmful of shown) {
      expect(harmful).toMatchObject({ deprecated: true });
      expect(harmful.injectionsBeforeDeprecation).toBeLessThanOrEqual(8);
    }
  });

  it("the same seed gives the same database dump", async () => {
    const first = await runArm("full", 5, { tasks: 100 });
    const second = await runArm("full", 5, { tasks: 100 });
    expect(second.databaseDigest).toBe(first.databaseDigest);
    expect(second.successes).toEqual(first.successes);
    const other = await runArm("full", 6, { tasks: 100 });
    expect(other.databaseDigest).not.toBe(first.databaseDigest);
  });
});
