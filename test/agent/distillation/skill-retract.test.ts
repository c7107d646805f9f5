/**
 * A deprecated lesson's advice never reaches a prompt through a distilled skill (issue 27's
 * acceptance run): a skill distilled from a harmful draft and a good lesson loses the
 * harmful bullets when the lifecycle deprecates the draft (its last 3 uses failed), in the
 * SKILL.md on disk, written through the agent's real toolhost, and ledgered; a skill built
 * only from the harmful lesson is deprecated; the daily round cleans up a skill built
 * before the rule; the "3 tasks of a tag failed" trigger never distils from a draft whose
 * uses failed.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { curateAgent, curateLessons } from "../../../src/agent/distillation/curate.js";
import { createDistillationLoop } from "../../../src/agent/distillation/distillation-loop.js";
import { contentHash } from "../../../src/agent/distillation/lesson-rules.js";
import { createSkillLoop } from "../../../src/agent/distillation/skill-loop.js";
import { withoutDeadBullets } from "../../../src/agent/distillation/skill-sections.js";
import type { TurnReport } from "../../../src/agent/turn/turn-context.js";
import { SkillCatalog } from "../../../src/knowledge/skill-catalog.js";
import { writeDraftIfMissing } from "../../../src/knowledge/skill-draft.js";
import type { ExperienceCategory, ExperienceSource } from "../../../src/store/experiences-store.js";
import type { Store } from "../../../src/store/store.js";
import { realWorkspace, type RealWorkspace } from "../../helpers/real-toolhost.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { skillLoopThroughToolhost } from "../../helpers/skill-loop-toolhost.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../../helpers/test-store.js";

const GOOD = "Tag the image with the commit hash before you deploy; latest is cached upstream.";
const HARMFUL = "Restart the gateway with --no-tls before you deploy; the TLS handshake slows the rollout.";
const RETRACTED = "exp-000002 was deprecated: its last 3 uses all failed";

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function testClock() {
  let now = 1_760_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

type Lesson = { summary: string; tag: string; status: "draft" | "active"; category: ExperienceCategory };

async function addLesson(store: Store, agentId: string, lesson: Lesson, source: ExperienceSource = "error_correction") {
  return store.experiences.add({
    agentId,
    source,
    summary: lesson.summary,
    category: lesson.category,
    confidence: 0.6,
    status: lesson.status,
    createdBy: "test",
    contentHash: contentHash(lesson.summary),
    tags: [lesson.tag],
  });
}

/** A task the lesson was shown to, settled as a failure (the user corrected it). */
async function failedUse(store: Store, agentId: string, lessonId: number, trace: string): Promise<void> {
  await store.injections.record(agentId, trace, "treatment", [lessonId]);
  await store.injections.settle(trace, "failure", "corrected");
}

describe("through the agent's toolhost: the skill drops a deprecated lesson's advice", () => {
  let workspace: RealWorkspace;
  beforeAll(async () => {
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
  }, 60_000);

  /** The skill loop over a fresh store, writing into agent a's tree through its real toolhost. */
  async function setup() {
    const clock = testClock();
    const store = await openTestStore("sqlite", { clock });
    opened.push(store);
    const { skills, catalog, skillsDir } = skillLoopThroughToolhost(workspace, "a", store, clock);
    const file = (name: string) => readFileSync(join(skillsDir, name, "SKILL.md"), "utf8");
    const steps = async (name: string) =>
      (await store.ledger.bySubject("skill", `${name}@v1`))
        .filter((entry) => entry.action !== "candidate" && entry.action !== "activate")
        .map((entry) => `${entry.action}: ${entry.reason}`);
    return { store, clock, catalog, skills, file, steps };
  }

  it("a skill from a harmful draft and a good lesson loses the harmful bullets when three failed tasks deprecate the draft", async () => {
    const { store, clock, catalog, skills, file, steps } = await setup();
    const skill = "distilled-deploy";
    // The good lesson is an operator's (the lifecycle never retires it); the harmful draft has no evidence yet.
    const good = await addLesson(
      store,
      "a",
      { summary: GOOD, tag: "deploy", status: "active", category: "best_practice" },
      "manual",
    );
    const harmful = await addLesson(store, "a", {
      summary: HARMFUL,
      tag: "deploy",
      status: "draft",
      category: "pitfall",
    });
    expect(await skills.distill("a", "deploy", { asked: true })).toMatchObject({ action: "drafted", version: 1 });
    expect(file(skill)).toContain(HARMFUL);
    expect(file(skill)).toContain(GOOD);

    // Three tasks through the distillation loop, each shown both lessons and corrected by the user.
    const distillation = createDistillationLoop({
      store,
      model: undefined,
      skills,
      settings: { locale: "en", holdoutPercent: 0, settleQuietMs: 60_000 },
      logger: pino({ level: "silent" }),
      clock,
    });
    const turn = async (traceId: string, text: string) => {
      const shown = await distillation.lessons.select({
        agentId: "a",
        traceId,
        sessionKey: "a:console:c1",
        userText: text,
      });
      distillation.afterTurn(report(traceId, text));
      await distillation.idle();
      return shown;
    };
    for (const index of [1, 2, 3]) {
      clock.advance(60_000);
      await turn(`t${index}`, "deploy the gateway service");
      clock.advance(60_000);
      await turn(`c${index}`, "No, that's wrong: it still breaks.");
    }
    await distillation.flush();
    expect(await store.injections.byExperience(harmful.id)).toHaveLength(3);
    expect((await store.experiences.get(harmful.id))?.status).toBe("deprecated");
    expect((await store.experiences.get(good.id))?.status).toBe("active");

    // The SKILL.md on disk (written by the toolhost) no longer says the harmful thing.
    const text = file(skill);
    expect(text).not.toContain(HARMFUL);
    expect(text).toContain(`- ${GOOD} [exp-000001]`);
    expect(text).not.toContain("exp-000002");
    expect(text).toMatch(/^status: draft$/m);
    expect(catalog.snapshot.get(skill)?.status).toBe("draft");
    expect(await steps(skill)).toEqual([`retract: ${RETRACTED}`]);
    expect(await store.skillVersions.active("a", skill)).toMatchObject({ version: 1, content: text, bullets: 2 });
    // Nothing more to retract: the daily round changes nothing.
    expect(await skills.curateSkills("a", clock.now())).toEqual([]);
  }, 60_000);

  it("a skill built only from the harmful lesson is deprecated, with the lesson's reason", async () => {
    const { store, catalog, skills, file, steps, clock } = await setup();
    const skill = "distilled-backup";
    await addLesson(store, "a", {
      summary: GOOD.replace("deploy", "back up"),
      tag: "other",
      status: "active",
      category: "best_practice",
    });
    const harmful = await addLesson(store, "a", {
      summary: "Run the backup with --skip-verify; verification doubles the time.",
      tag: "backup",
      status: "draft",
      category: "pitfall",
    });
    expect(await skills.distill("a", "backup", { asked: true })).toMatchObject({ action: "drafted", version: 1 });
    for (const trace of ["b1", "b2", "b3"]) await failedUse(store, "a", harmful.id, trace);
    // The path settle-task takes for the lessons a task was shown.
    expect(await curateLessons(store, [harmful], clock.now(), "lifecycle", skills)).toMatchObject([
      { experienceId: harmful.id, to: "deprecated", reason: "its last 3 uses all failed" },
    ]);
    expect(file(skill)).toMatch(/^status: deprecated$/m);
    expect(catalog.snapshot.get(skill)?.status).toBe("deprecated");
    expect(await steps(skill)).toEqual([`deprecate: ${RETRACTED}`]);
    // Restored by an operator while its only lesson is still deprecated: deprecated again at once.
    await skills.activate("a", skill, 1, "operator");
    expect(file(skill)).toMatch(/^status: deprecated$/m);
    expect(await steps(skill)).toEqual([
      `deprecate: ${RETRACTED}`,
      "restore: restored as a draft by operator",
      `deprecate: ${RETRACTED}`,
    ]);
  }, 60_000);

  const report = (traceId: string, text: string): TurnReport => ({
    message: { channel: "console", chatId: "c1", userId: "u1", text, agentId: "a", isOperator: true },
    traceId,
    sessionId: 7,
    sessionKey: "a:console:c1",
    kind: "answered",
    route: { skills: [], intentKey: "deploy", confidence: 0.9, dropped: [] },
    answer: "done",
  });
});

describe("what a skill is distilled from", () => {
  async function setup(engine: Engine) {
    const clock = testClock();
    const store = await openTestStore(engine, { clock });
    opened.push(store);
    const skillsDir = join(tempDir(), "skills");
    const catalog = new SkillCatalog([{ dir: skillsDir, source: "agent" }], pino({ level: "silent" }));
    const skills = createSkillLoop({
      store,
      model: undefined,
      catalog: () => catalog,
      writeDraft: (_agentId, name, text) => Promise.resolve(writeDraftIfMissing(skillsDir, name, text)),
      publishSkill: (_agentId, name, text) => Promise.resolve(writeFileSync(join(skillsDir, name, "SKILL.md"), text)),
      locale: "en",
      logger: pino({ level: "silent" }),
      clock,
    });
    /** A failed task of the tag, which the draft was shown to. */
    const failedTask = async (trace: string, lessonId: number) => {
      await failedUse(store, "main", lessonId, trace);
      await store.distillRuns.record({
        agentId: "main",
        traceId: trace,
        promptVersion: 1,
        outcome: "failure",
        outcomeKind: "corrected",
        tags: ["deploy"],
        phantomCitations: 0,
        status: "skipped",
        skipReason: "no model configured",
      });
    };
    const skillFile = join(skillsDir, "distilled-deploy", "SKILL.md");
    return { store, clock, skills, failedTask, skillFile };
  }

  it.each(STORE_ENGINES)(
    "the failure trigger does not distil from a draft whose uses all failed; a draft with no failed use still feeds it (%s)",
    async (engine) => {
      const { store, skills, failedTask, skillFile } = await setup(engine);
      const harmful = await addLesson(store, "main", {
        summary: HARMFUL,
        tag: "deploy",
        status: "draft",
        category: "pitfall",
      });
      for (const trace of ["f1", "f2", "f3"]) await failedTask(trace, harmful.id);
      expect(await skills.maybeTrigger("main", ["deploy"])).toEqual([
        {
          action: "skipped",
          why: "no live lessons tagged deploy that are not failing; left out: exp-000001 (draft, 3 of 3 uses failed)",
        },
      ]);
      expect(existsSync(skillFile)).toBe(false);
      expect(await store.skillVersions.all("main")).toEqual([]);

      // A fresh draft (no use yet) is no failing lesson: the skill is written from it alone.
      await addLesson(store, "main", { summary: GOOD, tag: "deploy", status: "draft", category: "best_practice" });
      expect(await skills.maybeTrigger("main", ["deploy"])).toMatchObject([{ action: "drafted", version: 1 }]);
      const text = readFileSync(skillFile, "utf8");
      expect(text).toContain(GOOD);
      expect(text).not.toContain(HARMFUL);
      expect(text).not.toContain("exp-000001");
    },
  );

  it.each(STORE_ENGINES)(
    "a skill distilled before the rule is cleaned up by the daily round, whatever path deprecated its lesson (%s)",
    async (engine) => {
      const { store, clock, skills, skillFile } = await setup(engine);
      await addLesson(
        store,
        "main",
        { summary: GOOD, tag: "deploy", status: "active", category: "best_practice" },
        "manual",
      );
      const harmful = await addLesson(store, "main", {
        summary: HARMFUL,
        tag: "deploy",
        status: "draft",
        category: "pitfall",
      });
      await skills.distill("main", "deploy", { asked: true });
      for (const trace of ["f1", "f2", "f3"]) await failedUse(store, "main", harmful.id, trace);
      // `laoding experiences curate` (no toolhost, no skill loop) deprecates the lesson; the skill still says it.
      await curateAgent(store, "main", clock.now(), "operator-curate");
      expect(readFileSync(skillFile, "utf8")).toContain(HARMFUL);
      const distillation = createDistillationLoop({
        store,
        model: undefined,
        skills,
        settings: { locale: "en", holdoutPercent: 0, settleQuietMs: 60_000 },
        logger: pino({ level: "silent" }),
        clock,
      });
      await distillation.curate("main");
      expect(readFileSync(skillFile, "utf8")).not.toContain(HARMFUL);
      expect(
        (await store.ledger.bySubject("skill", "distilled-deploy@v1")).filter((entry) => entry.action === "retract"),
      ).toMatchObject([{ reason: RETRACTED, actor: "skill-lifecycle" }]);
    },
  );

  it("bullets citing only dead lessons go; a bullet citing a live one stays, without the dead id", () => {
    const text = [
      "---",
      "name: distilled-deploy",
      "---",
      "## Decision heuristics",
      "- Use the good flag. [exp-000001]",
      "- Use the bad flag. [exp-000002]",
      "  which also needs a second line",
      "- Both agree here. [exp-000001, exp-000002]",
      "",
      "## Anti-patterns",
      "- Never skip the bad check. [exp-000002][exp-000003]",
      "",
      "## Honest limits",
      "- Only from 3 lessons [exp-000001, exp-000002, exp-000003]",
      "",
    ].join("\n");
    const result = withoutDeadBullets(text, new Set([2, 3]));
    expect(result.dropped).toEqual([
      "Use the bad flag. [exp-000002]",
      "Never skip the bad check. [exp-000002][exp-000003]",
    ]);
    expect(result.text).toBe(
      [
        "---",
        "name: distilled-deploy",
        "---",
        "## Decision heuristics",
        "- Use the good flag. [exp-000001]",
        "- Both agree here. [exp-000001]",
        "",
        "## Anti-patterns",
        "",
        "## Honest limits",
        "- Only from 3 lessons [exp-000001]",
        "",
      ].join("\n"),
    );
  });
});
