/**
 * Distilled skills follow the seed's lifecycle, counted by outcomes: promoted from draft
 * to active after ≥ 2 uses with a success rate over 50%, deprecated after 30 days unused
 * (the daily curate, on an injected clock) or under 20% success over ≥ 5 uses. The
 * SKILL.md's `status:` changes in the agent's tree (through the real toolhost, as the bot
 * writes it), the catalog sees it, the ledger says why, and `laoding experiences skills`
 * shows the state and the reason.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDistillationLoop } from "../../../src/agent/distillation/distillation-loop.js";
import { contentHash } from "../../../src/agent/distillation/lesson-rules.js";
import { nextSkillState, withSkillState } from "../../../src/agent/distillation/skill-lifecycle.js";
import { createSkillLoop, type SkillLoopOptions } from "../../../src/agent/distillation/skill-loop.js";
import { SkillCatalog } from "../../../src/knowledge/skill-catalog.js";
import { writeDraftIfMissing } from "../../../src/knowledge/skill-draft.js";
import { openStore, type Store } from "../../../src/store/store.js";
import { runLaoding } from "../../helpers/cli.js";
import { realWorkspace, type RealWorkspace } from "../../helpers/real-toolhost.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { skillLoopThroughToolhost } from "../../helpers/skill-loop-toolhost.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../../helpers/test-store.js";

const DAY = 86_400_000;
const SKILL = "distilled-deploy";
const LESSONS = [
  "Pass --force-tls when you deploy the gateway; it rejects plain connections.",
  "Set the probe port to 8443 for deploys; port 80 is closed on the gateway.",
  "Drain the queue with --graceful=30s before a deploy restarts workers.",
  "Run the deploy with --dry-run first on Mondays; the freeze window applies.",
  "Tag the image with the commit hash before deploy; latest is cached upstream.",
];

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

function testClock() {
  let now = 1_760_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function addLessons(store: Store, agentId: string): Promise<void> {
  for (const summary of LESSONS)
    await store.experiences.add({
      agentId,
      source: "error_correction",
      summary,
      category: "best_practice",
      confidence: 0.6,
      status: "active",
      createdBy: "test",
      contentHash: contentHash(summary),
      tags: ["deploy"],
    });
}

/** The skill loop over a real store and a real catalog of the skills folder on disk. */
async function setup(engine: Engine) {
  const clock = testClock();
  const store = await openTestStore(engine, { clock });
  opened.push(store);
  const skillsDir = join(tempDir(), "skills");
  const catalog = new SkillCatalog([{ dir: skillsDir, source: "agent" }], pino({ level: "silent" }));
  await addLessons(store, "main");
  const options: SkillLoopOptions = {
    store,
    model: undefined,
    catalog: () => catalog,
    writeDraft: (_agentId, name, text) => Promise.resolve(writeDraftIfMissing(skillsDir, name, text)),
    publishSkill: (_agentId, name, text) => Promise.resolve(writeFileSync(join(skillsDir, name, "SKILL.md"), text)),
    locale: "en",
    logger: pino({ level: "silent" }),
    clock,
  };
  const loop = createSkillLoop(options);
  expect(await loop.distill("main", "deploy")).toMatchObject({ action: "drafted", version: 1 });
  const file = () => readFileSync(join(skillsDir, SKILL, "SKILL.md"), "utf8");
  const steps = async () =>
    (await store.ledger.bySubject("skill", `${SKILL}@v1`))
      .filter((entry) => ["promote", "deprecate", "restore"].includes(entry.action))
      .map((entry) => `${entry.action}: ${entry.reason}`);
  const use = async (...outcomes: boolean[]) => {
    for (const success of outcomes) await loop.recordUse("main", [SKILL], success);
  };
  return { store, clock, catalog, loop, file, steps, use };
}

describe("distilled skills' lifecycle", () => {
  it.each(STORE_ENGINES)(
    "a draft is promoted after 2 successful uses: its SKILL.md says active, the catalog sees it, the ledger says why (%s)",
    async (engine) => {
      const { catalog, file, steps, use, store } = await setup(engine);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      await use(true);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      await use(true);
      expect(file()).toMatch(/^status: active$/m);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("active");
      expect(await steps()).toEqual(["promote: used in 2 tasks, success 100%"]);
      // The stored live text is the SKILL.md, and the counters are the live version's.
      expect(await store.skillVersions.active("main", SKILL)).toMatchObject({
        content: file(),
        uses: 2,
        successes: 2,
        trialUses: 2,
        lastUsedAt: expect.any(Number),
      });
    },
  );

  it.each(STORE_ENGINES)(
    "no promotion at 1 success in 2 uses (50% is not over 50%); promoted at 2 of 3 (%s)",
    async (engine) => {
      const { catalog, steps, use } = await setup(engine);
      await use(true, false);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      expect(await steps()).toEqual([]);
      await use(true);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("active");
      expect(await steps()).toEqual(["promote: used in 3 tasks, success 67%"]);
    },
  );

  it.each(STORE_ENGINES)(
    "deprecated by the daily curate after 30 days unused (injected clock); an operator restores it as a draft (%s)",
    async (engine) => {
      const { store, clock, catalog, loop, file, steps, use } = await setup(engine);
      await use(true, true);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("active");
      // The daily round is the distillation loop's curate: it runs the skills' lifecycle too.
      const distillation = createDistillationLoop({
        store,
        model: undefined,
        skills: loop,
        settings: { locale: "en", holdoutPercent: 0, settleQuietMs: 60_000 },
        logger: pino({ level: "silent" }),
        clock,
      });
      clock.advance(29 * DAY);
      await distillation.curate("main");
      expect(catalog.snapshot.get(SKILL)?.status).toBe("active");
      clock.advance(DAY);
      await distillation.curate("main");
      expect(file()).toMatch(/^status: deprecated$/m);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("deprecated");
      expect(await steps()).toEqual(["promote: used in 2 tasks, success 100%", "deprecate: unused for 30 days"]);
      expect(await loop.curateSkills("main", clock.now())).toEqual([]);

      // Undo: activating the live version again restores it as a draft, its counters afresh.
      await loop.activate("main", SKILL, 1, "operator");
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      expect(await store.skillVersions.active("main", SKILL)).toMatchObject({
        uses: 0,
        successes: 0,
        lastUsedAt: null,
      });
      expect((await steps()).at(-1)).toBe("restore: restored as a draft by operator");
    },
  );

  it.each(STORE_ENGINES)(
    "deprecated when its success rate is under 20% over at least 5 uses (20% exactly stays) (%s)",
    async (engine) => {
      const { catalog, file, steps, use } = await setup(engine);
      await use(true, false, false, false, false);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      await use(false);
      expect(file()).toMatch(/^status: deprecated$/m);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("deprecated");
      expect(await steps()).toEqual(["deprecate: success 17% over 6 uses"]);
    },
  );

  it("the rules as a pure function; the trial decides first while it can roll back", () => {
    const now = 1_760_000_000_000;
    const version = { uses: 0, successes: 0, lastUsedAt: null, updatedAt: now, trialUses: 0 };
    expect(nextSkillState({ ...version, uses: 2, successes: 2, trialUses: 2 }, "draft", now, false)).toEqual({
      to: "active",
      action: "promote",
      reason: "used in 2 tasks, success 100%",
    });
    expect(nextSkillState({ ...version, uses: 2, successes: 2, trialUses: 2 }, "active", now, false)).toBeUndefined();
    const failing = { ...version, uses: 10, successes: 1, trialUses: 10, lastUsedAt: now };
    expect(nextSkillState(failing, "active", now, true)).toMatchObject({ reason: "success 10% over 10 uses" });
    expect(nextSkillState({ ...failing, uses: 5, successes: 0, trialUses: 5 }, "draft", now, true)).toBeUndefined();
    expect(nextSkillState({ ...failing, uses: 5, successes: 0, trialUses: 5 }, "draft", now, false)).toMatchObject({
      to: "deprecated",
    });
    expect(nextSkillState(version, "draft", now + 30 * DAY - 1, false)).toBeUndefined();
    expect(nextSkillState(version, "deprecated", now + 90 * DAY, false)).toBeUndefined();
    expect(withSkillState("---\nname: x\nstatus: draft\n---\nstatus: keep\n", "active")).toBe(
      "---\nname: x\nstatus: active\n---\nstatus: keep\n",
    );
    expect(withSkillState("---\nname: x\n---\nbody\n", "deprecated")).toBe(
      "---\nname: x\nstatus: deprecated\n---\nbody\n",
    );
  });
});

describe("through the agent's toolhost, and `laoding experiences skills`", () => {
  let workspace: RealWorkspace;
  beforeAll(async () => {
    workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
  }, 60_000);

  it("the status change is written in the agent's tree, the catalog reloads it, and the CLI shows state and why", async () => {
    const clock = testClock();
    const store = await openStore(workspace.layout.databaseTarget, clock);
    const { skills: loop, catalog, skillsDir } = skillLoopThroughToolhost(workspace, "a", store, clock);
    try {
      await addLessons(store, "a");
      await loop.distill("a", "deploy");
      expect(catalog.snapshot.get(SKILL)?.status).toBe("draft");
      await loop.recordUse("a", [SKILL], true);
      clock.advance(60_000);
      await loop.recordUse("a", [SKILL], true);
      expect(readFileSync(join(skillsDir, SKILL, "SKILL.md"), "utf8")).toMatch(/^status: active$/m);
      expect(catalog.snapshot.get(SKILL)?.status).toBe("active");
    } finally {
      await store.close();
    }

    const run = (...args: string[]) =>
      runLaoding(["experiences", "skills", "--agent", "a", "--workspace", workspace.workspaceDir, ...args], {
        repoRoot: workspace.repoRoot,
      });
    const text = await run();
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /distilled-deploy \[active\] v1 live · on trial 2\/2 of 10 · used 2, 2 succeeded \(100%\) · last used 2025-10-09 \d\d:\d\d:\d\d/,
    );
    expect(text.stdout).toMatch(/why: used in 2 tasks, success 100% \(promote v1, 2025-10-09 /);
    expect(text.stdout).toContain("    v1 active · 7 bullets · trial 2/2");
    const json = await run("--json");
    expect(JSON.parse(json.stdout)).toMatchObject([
      {
        agentId: "a",
        skills: [
          {
            skillName: SKILL,
            state: "active",
            liveVersion: 1,
            trial: { uses: 2, successes: 2, length: 10 },
            uses: 2,
            successes: 2,
            successRate: 1,
            lastUsedAt: clock.now(),
            why: { action: "promote", reason: "used in 2 tasks, success 100%", version: "v1" },
          },
        ],
        versions: [{ skillName: SKILL, version: 1, status: "active", uses: 2 }],
      },
    ]);
  }, 60_000);
});
