/**
 * Outcomes are the evidence (issue 27): how each task ended is stored with its kind; an
 * environment failure counts for nothing; the gap loop hears of corrections and negative
 * feedback; a harmful lesson is deprecated by outcomes alone, with a distiller that only
 * ever proposes ADD; a deprecated lesson comes back when a later correction states it
 * again; a negative claim is revalidated after 14 days. Real store, real loop, and for the
 * end-to-end case the real bot with the model on the loopback fake.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { applyOperations, type ApplyInput } from "../../../src/agent/distillation/apply-operations.js";
import { curateAgent } from "../../../src/agent/distillation/curate.js";
import { createDistillationLoop } from "../../../src/agent/distillation/distillation-loop.js";
import { contentHash } from "../../../src/agent/distillation/lesson-rules.js";
import { deprecateLesson } from "../../../src/agent/distillation/operator-actions.js";
import { MAX_REVIVALS, MAX_REVIVALS_EVER } from "../../../src/agent/distillation/revive-lesson.js";
import type { SkillLoop } from "../../../src/agent/distillation/skill-loop.js";
import type { NegativeOutcomeEvent } from "../../../src/agent/distillation/task-state.js";
import type { TurnKind, TurnReport } from "../../../src/agent/turn/turn-context.js";
import { formatExperienceId } from "../../../src/store/experiences-store.js";
import type { Store } from "../../../src/store/store.js";
import { isRoutingRequest, routeTo, type RecordedRequest, type ScriptedReply } from "../../fakes/openai-server.js";
import { startTestBot } from "../../helpers/bot.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../../helpers/test-store.js";

const DAY = 86_400_000;
const REMEDY = "Pass --force-tls when you deploy the gateway; it rejects plain connections.";
const SESSION = "main:console:c1";

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function setup(engine: Engine) {
  let now = 1_750_000_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const store = await openTestStore(engine, { clock });
  opened.push(store);
  const add = (summary: string, status: "draft" | "active" = "draft") =>
    store.experiences.add({
      agentId: "main",
      source: "error_correction",
      summary,
      category: "pitfall",
      confidence: 0.5,
      createdBy: "distiller",
      contentHash: contentHash(summary),
      tags: ["deploy", "gateway"],
      status,
    });
  /** A task the lesson was shown to, settled with this outcome. */
  const use = async (lessonId: number, trace: string, outcome: "success" | "failure" | null) => {
    await store.injections.record("main", trace, "treatment", [lessonId]);
    await store.injections.settle(
      trace,
      outcome,
      outcome === null ? "environment" : outcome === "success" ? "success" : "corrected",
    );
  };
  const apply = (operations: ApplyInput["operations"], over: Partial<ApplyInput> = {}) =>
    applyOperations({
      store,
      agentId: "main",
      traceId: "tr-fresh",
      source: "error_correction",
      taskTags: ["deploy", "gateway"],
      aliases: new Map(),
      injectedIds: new Set(),
      taskStartedAt: clock.now(),
      userEvidence: "No, that's wrong: pass --force-tls, the gateway rejects plain connections.",
      operations,
      actor: "distiller",
      ...over,
    });
  const status = async (id: number) => (await store.experiences.get(id))?.status;
  const actions = async (id: number) =>
    (await store.ledger.bySubject("experience", formatExperienceId(id))).map((entry) => entry.action);
  return { store, clock, add, use, apply, status, actions };
}

describe("lessons judged by outcomes", () => {
  it.each(STORE_ENGINES)(
    "an environment failure is no use: three outages change nothing, three failures deprecate (%s)",
    async (engine) => {
      const { store, clock, add, use, status } = await setup(engine);
      const lesson = await add(REMEDY);
      for (const trace of ["e1", "e2", "e3"]) await use(lesson.id, trace, null);
      expect(await curateAgent(store, "main", clock.now())).toEqual([]);
      expect((await store.injections.byTrace("e1"))[0]).toMatchObject({ outcome: null, outcomeKind: "environment" });
      for (const trace of ["f1", "f2", "f3"]) await use(lesson.id, trace, "failure");
      expect(await curateAgent(store, "main", clock.now())).toEqual([
        { experienceId: lesson.id, from: "draft", to: "deprecated", reason: "its last 3 uses all failed" },
      ]);
      expect(await status(lesson.id)).toBe("deprecated");
    },
  );

  it.each(STORE_ENGINES)(
    "a draft whose shown tasks all succeed is never retired for low adoption (%s)",
    async (engine) => {
      const { store, clock, add, use, status } = await setup(engine);
      const lesson = await add(REMEDY);
      for (let index = 0; index < 9; index += 1) await use(lesson.id, `s${index}`, "success");
      expect(await curateAgent(store, "main", clock.now())).toEqual([]);
      expect(await status(lesson.id)).toBe("draft");
    },
  );
});

describe("revival", () => {
  it.each(STORE_ENGINES)(
    "a correction after its deprecation that states the same remedy brings a lesson back as a draft, counters afresh (%s)",
    async (engine) => {
      const { store, clock, add, use, apply, status, actions } = await setup(engine);
      const lesson = await add(REMEDY);
      await store.experiences.change(lesson.id, { contradictCount: 2 }, { action: "contradict", actor: "distiller" });
      for (const trace of ["f1", "f2", "f3"]) await use(lesson.id, trace, "failure");
      const before = clock.now();
      clock.advance(1_000);
      await curateAgent(store, "main", clock.now());
      expect(await status(lesson.id)).toBe("deprecated");
      const again = [{ op: "ADD", summary: REMEDY, category: "pitfall" }];
      // A task that began before the deprecation, or one that is not a correction or feedback, is no fresh evidence.
      expect((await apply(again, { taskStartedAt: before })).refused).toEqual([
        {
          index: 0,
          reason: `repeats deprecated lesson ${formatExperienceId(lesson.id)}; this task began before its deprecation`,
        },
      ]);
      clock.advance(60_000);
      expect((await apply(again, { source: "task_completion" })).refused[0]?.reason).toMatch(
        /only a user's correction or feedback after its deprecation brings it back/,
      );
      // The distiller's word alone is no evidence: the user's correction must state the remedy.
      expect((await apply(again, { userEvidence: "No, that's wrong: it still fails." })).refused[0]?.reason).toMatch(
        /the user's correction or feedback does not state its remedy$/,
      );
      // The same remedy in other words (a near duplicate) is the same lesson.
      const result = await apply([
        {
          op: "ADD",
          summary: "pass --force-tls when you deploy the gateway, it rejects plain connections",
          category: "pitfall",
        },
      ]);
      expect(result).toEqual({ applied: [{ op: "REVIVE", experienceId: lesson.id }], refused: [] });
      expect(await store.experiences.get(lesson.id)).toMatchObject({
        status: "draft",
        deprecatedReason: null,
        contradictCount: 0,
      });
      expect((await store.ledger.bySubject("experience", formatExperienceId(lesson.id))).at(-1)).toMatchObject({
        action: "revive",
        actor: "distiller",
        reason: "fresh evidence: a correction after its deprecation states the same remedy (task tr-fresh)",
      });
      // The failures before the revival are not held against it.
      expect(await curateAgent(store, "main", clock.now())).toEqual([]);
      expect(await actions(lesson.id)).toEqual(["create", "contradict", "deprecate", "revive"]);
      expect(await store.experiences.list("main")).toHaveLength(1);
    },
  );

  it.each(STORE_ENGINES)(
    "a lesson an operator deprecated, or one held for approval, is not revived: the ADD is refused saying why (%s)",
    async (engine) => {
      const { store, clock, add, apply, status } = await setup(engine);
      const lesson = await add(REMEDY, "active");
      await deprecateLesson(store, lesson, "wrong for our gateway", "operator");
      clock.advance(60_000);
      const refused = await apply([{ op: "ADD", summary: REMEDY, category: "pitfall" }]);
      expect(refused.refused[0]?.reason).toBe(
        `repeats deprecated lesson ${formatExperienceId(lesson.id)}; an operator retired it (deprecate by operator)`,
      );
      expect(await status(lesson.id)).toBe("deprecated");
      const network = "Scaffold the gateway deploy config with npx gateway-kit@latest init first.";
      const held = await apply([{ op: "ADD", summary: network, category: "pitfall" }]);
      expect(held.applied).toMatchObject([{ op: "HOLD" }]);
      clock.advance(60_000);
      const heldAgain = await apply([{ op: "ADD", summary: network, category: "pitfall" }]);
      expect(heldAgain.refused[0]?.reason).toMatch(/it is held for an operator's approval$/);
    },
  );
});

describe("negative claims expire", () => {
  const CLAIM = "The browser tool doesn't work for PDFs; use file_read on the downloaded file instead.";

  it.each(STORE_ENGINES)(
    "an active negative claim goes back to draft after 14 days; a success makes it active again, a failure deprecates it (%s)",
    async (engine) => {
      const { store, clock, add, use, status, actions } = await setup(engine);
      const claim = await add(CLAIM, "active");
      const plain = await add(REMEDY, "active");
      clock.advance(13 * DAY);
      expect(await curateAgent(store, "main", clock.now())).toEqual([]);
      clock.advance(2 * DAY);
      expect(await curateAgent(store, "main", clock.now())).toEqual([
        {
          experienceId: claim.id,
          from: "active",
          to: "draft",
          reason: "negative claim older than 14 days; revalidating",
        },
      ]);
      expect(await status(plain.id)).toBe("active");
      // While it revalidates, an outage decides nothing; the next use with an outcome does.
      await use(claim.id, "r0", null);
      expect(await curateAgent(store, "main", clock.now())).toEqual([]);
      clock.advance(1_000);
      await use(claim.id, "r1", "success");
      expect(await curateAgent(store, "main", clock.now())).toEqual([
        { experienceId: claim.id, from: "draft", to: "active", reason: "revalidated by a successful task" },
      ]);
      clock.advance(15 * DAY);
      await curateAgent(store, "main", clock.now());
      expect(await status(claim.id)).toBe("draft");
      clock.advance(1_000);
      await use(claim.id, "r2", "failure");
      expect(await curateAgent(store, "main", clock.now())).toEqual([
        {
          experienceId: claim.id,
          from: "draft",
          to: "deprecated",
          reason: "revalidation failed: the task it was shown to failed",
        },
      ]);
      expect(await actions(claim.id)).toEqual(["create", "revalidate", "promote", "revalidate", "deprecate"]);
    },
  );
});

describe("settling a task through the loop", () => {
  const report = (traceId: string, text: string, kind: TurnKind = "answered", skills: string[] = []): TurnReport => ({
    message: { channel: "console", chatId: "c1", userId: "u1", text, agentId: "main", isOperator: true },
    traceId,
    sessionId: 7,
    sessionKey: SESSION,
    kind,
    route: { skills, intentKey: "deploy-gateway", confidence: 0.9, dropped: [] },
    answer: "done",
  });

  it.each(STORE_ENGINES)(
    "stores each outcome's kind, tells the gap loop of corrections and negative feedback, and counts skill uses only with an outcome (%s)",
    async (engine) => {
      const { store, clock, add } = await setup(engine);
      const lesson = await add(REMEDY);
      const events: NegativeOutcomeEvent[] = [];
      const skillUses: [string[], boolean][] = [];
      let gapLoopDown = false;
      const skills = {
        recordUse: async (_agent: string, names: readonly string[], success: boolean) =>
          void skillUses.push([[...names], success]),
        maybeTrigger: async () => [],
        lessonsDeprecated: async () => [],
      } as unknown as SkillLoop;
      const loop = createDistillationLoop({
        store,
        model: undefined,
        settings: { locale: "en", holdoutPercent: 0, settleQuietMs: 1_000 },
        logger: pino({ level: "silent" }),
        clock,
        skills,
        onNegativeOutcome: async (event) => {
          if (gapLoopDown) throw new Error("the gap loop is down");
          events.push(event);
        },
      });
      const turn = async (traceId: string, text: string, kind?: TurnKind, used?: string[]) => {
        await loop.lessons.select({ agentId: "main", traceId, sessionKey: SESSION, userText: text });
        loop.afterTurn(report(traceId, text, kind, used));
        await loop.idle();
      };
      await turn("t1", "deploy the gateway service", "answered", ["distilled-deploy"]);
      await turn("t2", "No, that's wrong: the gateway needs --force-tls.");
      expect((await store.injections.byTrace("t1"))[0]).toMatchObject({
        experienceId: lesson.id,
        outcome: "failure",
        outcomeKind: "corrected",
      });
      expect(await store.distillRuns.get("t1", 1)).toMatchObject({ outcome: "failure", outcomeKind: "corrected" });
      expect(events).toEqual([
        {
          agentId: "main",
          traceId: "t1",
          sessionId: 7,
          userId: "u1",
          userText: "deploy the gateway service",
          intentKey: "deploy-gateway",
          kind: "corrected",
          detail: "No, that's wrong: the gateway needs --force-tls.",
        },
      ]);
      await turn("t3", "deploy the gateway service once more", "model_failure", ["distilled-deploy"]);
      expect((await loop.flush()).map((result) => [result.traceId, result.outcome, result.outcomeKind])).toEqual([
        ["t3", null, "environment"],
      ]);
      expect((await store.injections.byTrace("t3"))[0]).toMatchObject({ outcome: null, outcomeKind: "environment" });
      expect(await store.distillRuns.get("t3", 1)).toMatchObject({ outcome: null, outcomeKind: "environment" });
      // The skill used by the corrected task counted as a failure; the outage counted nothing.
      expect(skillUses).toEqual([[["distilled-deploy"], false]]);
      await turn("t4", "deploy the gateway service, third try");
      gapLoopDown = true;
      expect(await loop.feedback(SESSION, "bad", "still the wrong port")).toMatchObject({
        outcome: "failure",
        outcomeKind: "negative_feedback",
      });
      gapLoopDown = false;
      await turn("t5", "deploy the gateway service, fourth try");
      expect(await loop.feedback(SESSION, "bad", "x".repeat(400))).toMatchObject({ outcomeKind: "negative_feedback" });
      expect(events.slice(1)).toMatchObject([{ traceId: "t5", kind: "negative_feedback", detail: "x".repeat(300) }]);
      expect((await store.injections.byTrace("t4"))[0]).toMatchObject({ outcomeKind: "negative_feedback" });
    },
  );
});

describe("an ADD-only distiller", () => {
  const HARMFUL = "Pass --plain-tls when you deploy the gateway; it rejects encrypted connections.";
  const isDistill = (request: RecordedRequest) =>
    request.messages[0]?.content?.startsWith("You keep a team's lessons") ?? false;

  it("cannot keep a harmful lesson alive by citing it: its failed tasks deprecate it within 8 uses, never promoted", async () => {
    const bot = await startTestBot({ env: { DISTILL_HOLDOUT_PERCENT: "0" } });
    const { store } = bot.runtime;
    const harmful = await store.experiences.add({
      agentId: "main",
      source: "error_correction",
      summary: HARMFUL,
      category: "pitfall",
      confidence: 0.6,
      createdBy: "distiller",
      contentHash: contentHash(HARMFUL),
      tags: ["deploy", "gateway"],
    });
    const id = formatExperienceId(harmful.id);
    let distillerCalls = 0;
    bot.fake.respond((request): ScriptedReply => {
      if (isRoutingRequest(request)) return routeTo([], "deploy-gateway");
      if (isDistill(request)) {
        distillerCalls += 1;
        // Like many real models: only ever ADD, here the very lesson it was shown.
        return { text: JSON.stringify({ operations: [{ op: "ADD", summary: HARMFUL, category: "pitfall" }] }) };
      }
      const system = request.messages[0]?.content ?? "";
      // The model follows the lesson it is shown and cites it every time.
      return { text: system.includes(id) ? `Deployed with --plain-tls.\nLessons used: ${id}` : "Deployed." };
    });
    const distillation = bot.runtime.distillation;
    if (!distillation) throw new Error("distillation should be on by default");
    let uses = 0;
    for (; uses < 8; uses += 1) {
      if ((await store.experiences.get(harmful.id))?.status === "deprecated") break;
      expect(await bot.send(`deploy the gateway service, attempt ${uses + 1}`)).toBe("Deployed with --plain-tls.");
      await bot.send("No, that's wrong: the gateway still rejects the connection.");
      await distillation.idle();
    }
    // Three failed uses are enough; the bar is 8.
    expect(uses).toBe(3);
    const lesson = await store.experiences.get(harmful.id);
    expect(lesson).toMatchObject({ status: "deprecated", deprecatedReason: "its last 3 uses all failed" });
    expect(lesson?.usageCount).toBe(uses);
    const ledger = await store.ledger.bySubject("experience", id);
    expect(ledger.map((entry) => entry.action)).not.toContain("promote");
    expect(ledger.at(-1)).toMatchObject({ action: "deprecate", actor: "lifecycle" });
    expect(distillerCalls).toBeGreaterThan(0);
    const runs = await store.distillRuns.byAgent("main");
    expect(runs.filter((run) => run.outcomeKind === "corrected")).toHaveLength(uses);
    expect(
      (await store.injections.byExperience(harmful.id)).map((row) => [row.cited, row.outcome, row.outcomeKind]),
    ).toEqual(Array.from({ length: uses }, () => [1, "failure", "corrected"]));
  });
});

describe("the effect report", () => {
  it.each(STORE_ENGINES)(
    "counts outcomes, not citations: per lesson its uses and successes against the holdout, and how tasks ended (%s)",
    async (engine) => {
      const { store, add } = await setup(engine);
      const { effectReport, formatLessonEvidence } = await import("../../../src/agent/distillation/effect-report.js");
      const lesson = await add(REMEDY);
      const task = async (
        trace: string,
        arm: "treatment" | "holdout",
        outcome: "success" | "failure" | null,
        citedIt = false,
      ) => {
        await store.injections.record("main", trace, arm, [lesson.id]);
        if (citedIt) await store.injections.cite(trace, [lesson.id]);
        const kind = outcome === null ? "environment" : outcome === "success" ? "success" : "failed_tool";
        await store.injections.settle(trace, outcome, kind);
        await store.distillRuns.record({
          agentId: "main",
          traceId: trace,
          promptVersion: 1,
          status: "skipped",
          outcome,
          outcomeKind: kind,
          tags: ["deploy", "gateway"],
        });
      };
      await task("a", "treatment", "success", true);
      await task("b", "treatment", "success");
      await task("c", "treatment", "failure", true);
      await task("d", "treatment", null, true);
      await task("h1", "holdout", "failure");
      await task("h2", "holdout", "success");
      const report = await effectReport(store, "main");
      expect(report.overall.treatment).toEqual({ n: 3, successes: 2, rate: 2 / 3 });
      expect(report.overall.holdout).toEqual({ n: 2, successes: 1, rate: 0.5 });
      const [row] = report.lessons;
      expect(row).toMatchObject({
        injected: 3,
        cited: 2,
        uses: { n: 3, successes: 2 },
        citedSuccesses: 1,
        tagHoldout: { n: 2, successes: 1, rate: 0.5 },
      });
      expect(row && formatLessonEvidence(row)).toBe(
        "used 3 · succeeded 2 (67% vs 50% in the holdout, n=2) · cited 2, 1 of them succeeded",
      );
      expect(report.outcomeKinds).toEqual({ success: 3, failed_tool: 2, environment: 1 });
    },
  );
});

describe("a correction states a lesson's remedy", () => {
  it("when it names all of the lesson's flags, numbers and paths, or a third of its words when it has none", async () => {
    const { statesRemedy } = await import("../../../src/agent/distillation/revive-lesson.js");
    expect(statesRemedy(REMEDY, "No, that's wrong: the gateway needs --force-tls.")).toBe(true);
    expect(statesRemedy(REMEDY, "No, that's wrong: the gateway needs --plain-tls.")).toBe(false);
    expect(statesRemedy(REMEDY, "")).toBe(false);
    expect(
      statesRemedy(
        "Set the probe port to 8443 for deploys; port 80 is closed.",
        "不对，探针端口应该是 8443，80 是关的",
      ),
    ).toBe(true);
    expect(
      statesRemedy(
        "Restart the worker service before reloading the gateway configuration.",
        "No, restart the worker service first",
      ),
    ).toBe(true);
    expect(statesRemedy("Restart the worker service before reloading the gateway configuration.", "No.")).toBe(false);
  });
});

describe("which lessons are negative claims", () => {
  it("a tool said not to work, to be broken or missing; not a plain lesson", async () => {
    const { isNegativeClaim } = await import("../../../src/agent/distillation/lesson-rules.js");
    expect(isNegativeClaim("The browser tool doesn't work for PDFs; use file_read instead.")).toBe(true);
    expect(isNegativeClaim("ffmpeg is not installed in the sandbox; convert with the media tool.")).toBe(true);
    expect(isNegativeClaim("浏览器工具不可用，改用 file_read 读取下载的文件。")).toBe(true);
    expect(isNegativeClaim(REMEDY)).toBe(false);
  });
});

describe("revival is capped", () => {
  it.each(STORE_ENGINES)(
    "one chat cannot keep a lesson that never helped in front of everyone: after MAX_REVIVALS revivals only an operator restores it (%s)",
    async (engine) => {
      const { store, clock, add, use, apply, status } = await setup(engine);
      const lesson = await add(REMEDY);
      const again = [{ op: "ADD", summary: REMEDY, category: "pitfall" }];
      for (let round = 0; round <= MAX_REVIVALS; round += 1) {
        for (const trace of ["a", "b", "c"]) await use(lesson.id, `r${round}-${trace}`, "failure");
        clock.advance(1_000);
        await curateAgent(store, "main", clock.now());
        expect(await status(lesson.id)).toBe("deprecated");
        clock.advance(1_000);
        const result = await apply(again, { traceId: `tr-${round}`, taskStartedAt: clock.now() });
        if (round < MAX_REVIVALS) expect(result.applied).toEqual([{ op: "REVIVE", experienceId: lesson.id }]);
        else
          expect(result.refused[0]?.reason).toBe(
            `repeats deprecated lesson ${formatExperienceId(lesson.id)}; it was revived ${MAX_REVIVALS} times already, never helped a task succeed, and was deprecated again; an operator can restore it (laoding experiences restore ${formatExperienceId(lesson.id)})`,
          );
        clock.advance(1_000);
      }
      expect(await status(lesson.id)).toBe("deprecated");
    },
  );
});

describe("revival is capped for a lesson that helped too", () => {
  it.each(STORE_ENGINES)(
    "a lesson whose tasks succeeded comes back more often, but not forever (%s)",
    async (engine) => {
      const { store, clock, add, use, apply, status } = await setup(engine);
      const lesson = await add(REMEDY);
      const again = [{ op: "ADD", summary: REMEDY, category: "pitfall" }];
      await use(lesson.id, "helped", "success");
      for (let round = 0; round <= MAX_REVIVALS_EVER; round += 1) {
        for (const trace of ["a", "b", "c"]) await use(lesson.id, `h${round}-${trace}`, "failure");
        clock.advance(1_000);
        await curateAgent(store, "main", clock.now());
        clock.advance(1_000);
        const result = await apply(again, { traceId: `th-${round}`, taskStartedAt: clock.now() });
        if (round < MAX_REVIVALS_EVER) expect(result.applied).toEqual([{ op: "REVIVE", experienceId: lesson.id }]);
        else expect(result.refused[0]?.reason).toMatch(/it was revived 10 times already and was deprecated again/);
        clock.advance(1_000);
      }
      expect(await status(lesson.id)).toBe("deprecated");
    },
  );
});

describe("what a task's outcome is made of", () => {
  const base = { kind: "answered" as const, gapClasses: [], toolCalls: [], alreadyDistilled: false };
  it.each([
    ["a model that said it cannot (report_gap)", { gapClasses: ["capability"], gapReasons: ["reported"] }, "reported"],
    [
      "a failure only the gaps know (an unknown tool as the last step)",
      {
        gapClasses: ["capability"],
        gapReasons: ["parse_failure"],
        unrecoveredToolFailure: true,
        toolCalls: [{ ok: true }],
      },
      "failed_tool",
    ],
    [
      "a missing program the turn recovered from (rg failed, grep worked)",
      {
        gapClasses: ["environment"],
        gapReasons: ["tool_failure"],
        environmentCauses: ["command-missing"],
        toolCalls: [{ ok: false }, { ok: true }],
      },
      "success",
    ],
    [
      "a tool host that crashed and came back",
      {
        gapClasses: ["environment"],
        gapReasons: ["tool_failure"],
        environmentCauses: ["toolhost-unavailable"],
        toolCalls: [{ ok: false }, { ok: true }],
      },
      "success",
    ],
    [
      "the tool host down before any tool ran",
      { gapClasses: ["environment"], gapReasons: ["tool_failure"], environmentCauses: ["toolhost-unavailable"] },
      "environment",
    ],
    [
      "a command that hung past its timeout (maybe a lesson's advice)",
      {
        gapClasses: ["environment"],
        gapReasons: ["tool_failure"],
        environmentCauses: ["tool-timeout"],
        toolCalls: [{ ok: true }, { ok: false }],
      },
      "failed_tool",
    ],
    [
      "a program that is not installed",
      { gapClasses: ["environment"], environmentCauses: ["command-missing"], toolCalls: [{ ok: false }] },
      "failed_tool",
    ],
    ["a turn that just answered", {}, "success"],
  ] as const)("%s", async (_name, facts, kind) => {
    const { taskOutcome } = await import("../../../src/agent/distillation/task-gates.js");
    expect(taskOutcome({ ...base, ...facts } as Parameters<typeof taskOutcome>[0]).kind).toBe(kind);
  });

  it("a reply that thanks, approves or moves on is not a correction; one that says it is wrong is", async () => {
    const { looksLikeCorrection } = await import("../../../src/agent/distillation/task-gates.js");
    for (const text of [
      "no thanks",
      "nope, all good",
      "No problem, thanks!",
      "no, that's perfect",
      "No worries",
      "Actually, can you also list the files?",
      "actually I'm fine",
      "不用了，谢谢",
      "没问题",
    ])
      expect([text, looksLikeCorrection(text)]).toEqual([text, false]);
    for (const text of [
      "no, that's wrong: it has 40 words",
      "No, use --plain-tls",
      "nope, it still fails",
      "actually it doesn't work",
      "wrong, the port is 8443",
      "不对，应该是 8443",
      "还是不行",
      "you forgot the flag",
      "No good, it still fails",
      "No need to restart — you broke the config",
      "Nope, fine, but the port is wrong",
      "actually the port is 8080 not 80",
      "Actually, you should use port 8080",
    ])
      expect([text, looksLikeCorrection(text)]).toEqual([text, true]);
  });
});
