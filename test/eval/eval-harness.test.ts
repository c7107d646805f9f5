/**
 * A small, fast subset of `npm run eval`: one or two seeds, a short stream, the real
 * orchestrator, store and loop with the scripted agent and distiller.
 */
import { describe, expect, it } from "vitest";
import { summarise } from "../../eval/harness.js";
import { citationLeaked } from "../../eval/measures.js";
import { runArm, type ArmResult } from "../../eval/run-arm.js";
import { CITATION_FORMS } from "../../eval/scripted-agent.js";

const TASKS = 150;

describe("efficacy harness (subset)", () => {
  it("the full loop beats no memory, the placebo gains nothing, no citation line reaches a user, and harmful lessons are deprecated", async () => {
    const results: ArmResult[] = [];
    for (const arm of ["none", "full", "placebo"] as const) results.push(await runArm(arm, 3, { tasks: TASKS }));
    const summary = summarise(results, 1, TASKS, ["none", "full", "placebo"]);
    const { none, full, placebo } = summary.arms;
    if (!none || !full || !placebo) throw new Error("an arm is missing from the summary");
    expect(full.lastWindowSuccess - none.lastWindowSuccess).toBeGreaterThan(0.15);
    expect(full.repeatFailureRate).toBeLessThanOrEqual(none.repeatFailureRate / 2);
    expect(placebo.lastWindowSuccess).toBeLessThanOrEqual(none.lastWindowSuccess);
    expect(summary.citationLeaks).toBe(0);
    const fullRun = results[1] as ArmResult;
    expect(fullRun.lessons.created).toBeGreaterThan(0);
    const shown = fullRun.harmful.filter((lesson) => lesson.injectionsBeforeDeprecation > 0);
    expect(shown.length).toBeGreaterThan(0);
    for (const harmful of shown) {
      expect(harmful).toMatchObject({ deprecated: true });
      expect(harmful.injectionsBeforeDeprecation).toBeLessThanOrEqual(8);
    }
  });

  it("with a distiller that only ever proposes ADD, every harmful lesson shown is deprecated within 8 uses", async () => {
    const results = [await runArm("addOnly", 1, { tasks: TASKS }), await runArm("addOnly", 3, { tasks: TASKS })];
    const harmful = summarise(results, 2, TASKS, ["addOnly"]).harmful.byArm.addOnly;
    // Not vacuous: the distiller's wrong remedies reached tasks in both seeds.
    for (const run of results) expect(run.harmful.filter((lesson) => lesson.uses > 0).length).toBeGreaterThan(0);
    // An open life (shown, not yet deprecated when the stream ends) counts its uses too.
    expect(results.flatMap((run) => run.harmful.filter((lesson) => lesson.usesBeforeDeprecation > 8))).toEqual([]);
    expect(harmful?.maxUsesBySeed.every((uses) => uses <= 8)).toBe(true);
    expect(results.flatMap((run) => run.harmful).some((lesson) => lesson.uses > 0 && lesson.deprecated)).toBe(true);
  });

  it("with citations written as models write them, none reaches the user and no helpful lesson is retired for them", async () => {
    const run = await runArm("markdownCitation", 1, { tasks: TASKS });
    expect(run.citationsWritten).toBeGreaterThan(CITATION_FORMS.length);
    expect(run.helpful.length).toBeGreaterThan(0);
    expect(run.citationLeaks).toBe(0);
    const summary = summarise([run], 1, TASKS, ["markdownCitation"]);
    expect(summary.arms.markdownCitation).toMatchObject({ citationLeaks: 0 });
    // Adoption is a hint: no helpful lesson is retired as ignored (the bold-label bug retired them all).
    expect(run.helpful.filter((lesson) => /adoption|never cited/.test(lesson.reason ?? ""))).toEqual([]);
    // The citation's form changes nothing: the same lessons live and die as with the plain line.
    // (Outcomes alone can still retire a right remedy whose family keeps failing on another trap;
    // a later correction restating it revives it. That is the full arm's behaviour too.)
    const plain = await runArm("full", 1, { tasks: TASKS });
    expect(run.helpful).toEqual(plain.helpful);
    expect(run.successes).toEqual(plain.successes);
  });

  it("the leak check sees every citation form the markdown agent writes, and not a clean answer", () => {
    const body = "Done: deploy gateway with --force-tls.";
    for (const form of CITATION_FORMS) {
      expect(citationLeaked(form(body, ["exp-3"]), body)).toBe(true);
      expect(citationLeaked(form(body, ["exp-3", "exp-17"]), undefined)).toBe(true);
    }
    expect(citationLeaked(`${body} **`, body)).toBe(true);
    expect(citationLeaked(body, body)).toBe(false);
  });

  it("the same seed gives the same database dump", async () => {
    const first = await runArm("full", 5, { tasks: 100 });
    const second = await runArm("full", 5, { tasks: 100 });
    expect(second.databaseDigest).toBe(first.databaseDigest);
    expect(second.successes).toEqual(first.successes);
    const other = await runArm("full", 6, { tasks: 100 });
    expect(other.databaseDigest).not.toBe(first.databaseDigest);
    const markdown = await runArm("markdownCitation", 5, { tasks: 100 });
    expect((await runArm("markdownCitation", 5, { tasks: 100 })).databaseDigest).toBe(markdown.databaseDigest);
  });
});
