/**
 * Level 2 over a real store and a real skill catalog on disk: the first version is a
 * draft through the gap drafts' gate and create-only writer; a degraded version is
 * rejected by the ratchet; a version forced active that does worse is rolled back; the
 * rollback is ledgered and undone by activating the version again.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { contentHash } from "../../../src/agent/distillation/lesson-rules.js";
import { bulletLoss, judgeCandidate, trialVerdict } from "../../../src/agent/distillation/skill-ratchet.js";
import { describeSkillOutcome } from "../../../src/agent/distillation/skill-commands.js";
import { createSkillLoop } from "../../../src/agent/distillation/skill-loop.js";
import { SkillCatalog } from "../../../src/knowledge/skill-catalog.js";
import { writeDraftIfMissing } from "../../../src/knowledge/skill-draft.js";
import type { ChatModel } from "../../../src/llm/chat-model.js";
import type { Store } from "../../../src/store/store.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../../helpers/test-store.js";

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

async function setup(engine: Engine, model?: ChatModel) {
  let now = 1_760_000_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const root = tempDir();
  const store = await openTestStore(engine, { clock });
  opened.push(store);
  const skillsDir = join(root, "skills");
  const catalog = new SkillCatalog([{ dir: skillsDir, source: "agent" }], pino({ level: "silent" }));
  for (const summary of LESSONS)
    await store.experiences.add({
      agentId: "main",
      source: "error_correction",
      summary,
      category: "best_practice",
      confidence: 0.6,
      status: "active",
      createdBy: "test",
      contentHash: contentHash(summary),
      tags: ["deploy"],
    });
  const loop = createSkillLoop({
    store,
    model,
    catalog: () => catalog,
    writeDraft: (_agentId, name, text) => Promise.resolve(writeDraftIfMissing(skillsDir, name, text)),
    publishSkill: (_agentId, name, text) => Promise.resolve(writeFileSync(join(skillsDir, name, "SKILL.md"), text)),
    locale: "en",
    logger: pino({ level: "silent" }),
    clock,
  });
  const file = () => readFileSync(join(skillsDir, "distilled-deploy", "SKILL.md"), "utf8");
  return { store, clock, catalog, loop, file };
}

describe("Level 2: lessons into a versioned skill", () => {
  it.each(STORE_ENGINES)(
    "drafts v1 through the gate and the create-only draft folder when 5 live lessons share a tag, and hot-reloads it (%s)",
    async (engine) => {
      const { loop, catalog, file, store } = await setup(engine);
      expect(await loop.maybeTrigger("main", ["deploy"])).toEqual([
        { action: "drafted", skillName: "distilled-deploy", version: 1, author: "template" },
      ]);
      expect(catalog.snapshot.get("distilled-deploy")).toMatchObject({ status: "draft", origin: "distilled" });
      expect(file()).toMatch(/## Decision heuristics\n- Pass --force-tls .* \[exp-000001\]/);
      expect(file()).toMatch(/## Anti-patterns\n/);
      expect(file()).toMatch(/## Honest limits\n- These come from 5 lessons/);
      expect((await store.experiences.get(1))?.skillName).toBe("distilled-deploy");
      // Debounced for 24 hours unless asked.
      expect(await loop.maybeTrigger("main", ["deploy"])).toMatchObject([
        { action: "skipped", why: "a version was written in the last 24 hours", words: { key: "skillDebounced" } },
      ]);
    },
  );

  it.each(STORE_ENGINES)(
    "rejects a degraded version (drops more than 25% of the bullets), and rolls back a forced-active one that does worse; the rollback can be undone (%s)",
    async (engine) => {
      let reply = "";
      const model: ChatModel = {
        model: "scripted",
        complete: () => Promise.resolve({ content: reply, toolCalls: [], finishReason: "stop", model: "scripted" }),
      };
      const { loop, store, clock, file } = await setup(engine, model);
      await loop.distill("main", "deploy");
      for (let index = 0; index < 10; index += 1) await loop.recordUse("main", ["distilled-deploy"], true);
      // Used with success: promoted (its SKILL.md says active now; see skill-lifecycle.test.ts).
      const v1 = file();
      expect(v1).toMatch(/^status: active$/m);
      expect(await store.skillVersions.active("main", "distilled-deploy")).toMatchObject({
        version: 1,
        trialUses: 10,
        trialSuccesses: 10,
      });

      reply = [
        "---",
        "name: distilled-deploy",
        "description: Deploy heuristics.",
        "status: draft",
        "origin: distilled",
        "intent_key: deploy",
        "created: 2025-10-09",
        "---",
        "",
        "## Decision heuristics",
        "- Pass --force-tls when you deploy the gateway. [exp-000001]",
        "",
        "## Anti-patterns",
        "- Deploying over plain connections. [exp-000001]",
        "",
        "## Honest limits",
        "- Only one lesson so far. [exp-000001]",
        "",
      ].join("\n");
      clock.advance(2 * 86_400_000);
      expect(await loop.distill("main", "deploy")).toMatchObject({
        action: "rejected",
        version: 2,
        why: expect.stringMatching(/drops \d+% of the previous bullets/),
      });
      expect(file()).toBe(v1);

      const forced = await loop.distill("main", "deploy", { asked: true, forceActive: true });
      expect(forced).toMatchObject({ action: "published", version: 3, author: "model" });
      expect(file()).toContain("Only one lesson so far");
      for (let index = 0; index < 10; index += 1) await loop.recordUse("main", ["distilled-deploy"], index < 5);
      expect(
        (await store.skillVersions.versions("main", "distilled-deploy")).map((row) => `${row.version}:${row.status}`),
      ).toEqual(["1:active", "2:rejected", "3:rolled_back"]);
      expect(file()).toBe(v1);
      const ledger = (await store.ledger.byAgent("main"))
        .filter((entry) => entry.subject === "skill")
        .map((entry) => `${entry.subjectId} ${entry.action}`);
      expect(ledger).toEqual(
        expect.arrayContaining([
          "distilled-deploy@v3 force-activate",
          "distilled-deploy@v3 rollback",
          "distilled-deploy@v1 reactivate",
        ]),
      );

      // Undo the rollback: v3 live again, v1 retired, both in the ledger.
      await loop.activate("main", "distilled-deploy", 3, "operator");
      expect(file()).toContain("Only one lesson so far");
      expect((await store.skillVersions.active("main", "distilled-deploy"))?.version).toBe(3);
      await loop.activate("main", "distilled-deploy", 1, "operator");
      expect(file()).toBe(v1);
    },
  );

  it("ratchet rules as pure functions", () => {
    const skill = (bullets: string[]) =>
      `## Decision heuristics\n${bullets.map((bullet) => `- ${bullet}`).join("\n")}\n`;
    expect(
      bulletLoss(
        skill(["a [exp-1]", "b [exp-2]", "c [exp-3]", "d [exp-4]"]),
        skill(["a [exp-1]", "b [exp-2]", "c [exp-3]"]),
      ),
    ).toBe(0.25);
    expect(
      judgeCandidate({
        active: skill(["a [exp-1]", "b [exp-2]", "c [exp-3]", "d [exp-4]"]),
        candidate: skill(["a [exp-1]", "b [exp-2]", "c [exp-3]"]),
        taskLessons: [[1], [4]],
      }),
    ).toMatchObject({ accept: false, reason: expect.stringMatching(/covers 50% .* vs 100%/) });
    expect(
      judgeCandidate({
        active: skill(["a [exp-1]"]),
        candidate: skill(["a [exp-1]", "e [exp-5]"]),
        taskLessons: [[1], [5]],
      }),
    ).toEqual({ accept: true });
    // People read the refusal in their language: the reason is worded from the locale tables, never the ledger's English.
    const refused = judgeCandidate({
      active: skill(["a [exp-1]", "b [exp-2]", "c [exp-3]", "d [exp-4]"]),
      candidate: skill(["a [exp-1]", "b [exp-2]", "c [exp-3]"]),
      taskLessons: [[1], [4]],
    });
    if (refused.accept) throw new Error("expected a refusal");
    expect(
      describeSkillOutcome(
        { action: "rejected", skillName: "distilled-deploy", version: 2, why: refused.reason, words: refused.words },
        "zh",
      ),
    ).toBe("distilled-deploy v2 未通过：它覆盖了 50% 的已记录任务，而当前版本覆盖 100%");
    expect(trialVerdict({ trialUses: 9, trialSuccesses: 0, baselineRate: 1 })).toBe("continue");
    expect(trialVerdict({ trialUses: 10, trialSuccesses: 8, baselineRate: 0.9 })).toBe("keep");
    expect(trialVerdict({ trialUses: 10, trialSuccesses: 7, baselineRate: 0.9 })).toBe("rollback");
  });
});

describe("operator requests", () => {
  it.each(STORE_ENGINES)(
    "a queued `laoding experiences distill <tag>` request is done by the bot's loop and its outcome recorded (%s)",
    async (engine) => {
      const { handleDistillRequests } = await import("../../../src/agent/distillation/skill-commands.js");
      const { store, loop, catalog } = await setup(engine);
      await store.skillVersions.requestDistill("main", "deploy");
      expect(await handleDistillRequests(store, loop)).toBe(1);
      expect(await store.skillVersions.requests("main")).toMatchObject([
        { tag: "deploy", outcome: "distilled-deploy v1 drafted (template).", handledAt: expect.any(Number) },
      ]);
      expect(catalog.snapshot.get("distilled-deploy")).toBeDefined();
      expect(await handleDistillRequests(store, loop)).toBe(0);
    },
  );
});
