/**
 * Level 2: lessons -> a distilled skill. Triggered when >= 5 live lessons share a tag,
 * when 3 tasks of a tag failed within 14 days, or when asked; at most once per tag per
 * 24 hours unless asked. The first version is written through the gap drafts' path
 * (structure gate, create-only draft folder, hot reload); later versions are candidates
 * that pass the ratchet before they are published, and every live version is on trial
 * for the next tasks that use it, with an automatic, ledgered, undoable rollback. The live
 * version's SKILL.md follows the seed's lifecycle (draft, active, deprecated): see
 * skill-lifecycle.ts. It never carries a deprecated lesson's advice: see skill-retract.ts.
 */
import type { Logger } from "pino";
import type { SkillCatalog } from "../../knowledge/skill-catalog.js";
import type { DraftWrite } from "../../knowledge/skill-draft.js";
import type { ChatModel } from "../../llm/chat-model.js";
import type { SkillVersion } from "../../store/skill-versions-store.js";
import type { Store } from "../../store/store.js";
import type { Locale } from "../texts.js";
import { citedLessons, trialVerdict } from "./skill-ratchet.js";
import { distill, liveLessons } from "./skill-distill.js";
import {
  curateSkills,
  judgeSkill,
  liveAgain,
  skillState,
  withSkillState,
  type SkillLifecycleChange,
} from "./skill-lifecycle.js";
import { retractDeprecated, retractSkill, type SkillRetraction } from "./skill-retract.js";

export const SKILL_TRIGGER = {
  liveLessons: 5,
  failures: 3,
  failureWindowMs: 14 * 86_400_000,
  debounceMs: 86_400_000,
} as const;

export type SkillOutcome =
  | { action: "drafted" | "published"; skillName: string; version: number; author: "model" | "template" }
  | { action: "rejected"; skillName: string; version: number; why: string; words?: OutcomeWords }
  | { action: "skipped"; why: string; words?: OutcomeWords };

/** The reason as people read it (a locale text key and its values); `why` stays for logs and the ledger. */
export type OutcomeWords = {
  key: "ratchetDropsBullets" | "ratchetCoversLess" | "skillDebounced";
  values: Record<string, number>;
};

export type SkillLoop = {
  /** Distils the tag's lessons now (operators and the chat request pass `asked`). */
  distill(agentId: string, tag: string, options?: { asked?: boolean; forceActive?: boolean }): Promise<SkillOutcome>;
  /** After a settled task: its tags may cross a trigger. */
  maybeTrigger(agentId: string, tags: readonly string[]): Promise<SkillOutcome[]>;
  /**
   * A settled task with an outcome (never an environment failure) that used distilled
   * skills: counts toward their trial and their lifecycle (promotion, deprecation).
   */
  recordUse(agentId: string, skillNames: readonly string[], success: boolean): Promise<void>;
  /**
   * Lessons were deprecated: the live skills citing them drop the bullets that cite only
   * deprecated lessons, or are deprecated when no advice remains. Never throws.
   */
  lessonsDeprecated(agentId: string, lessonIds: readonly number[]): Promise<SkillRetraction[]>;
  /**
   * The periodic lifecycle round: retracts deprecated lessons from the live versions, then
   * promotes, or deprecates (30 days unused, low success), them.
   */
  curateSkills(agentId: string, now: number): Promise<SkillLifecycleChange[]>;
  /** Makes any version the live one (undoes a rollback or a rejection); ledgered. */
  activate(agentId: string, skillName: string, version: number, actor: string): Promise<SkillVersion>;
};

export type SkillLoopOptions = {
  store: Store;
  model: ChatModel | undefined;
  catalog: (agentId: string) => SkillCatalog;
  /** Create-only write of a new skill folder (the gap drafts' path, through the agent's toolhost). */
  writeDraft: (agentId: string, name: string, text: string) => Promise<DraftWrite>;
  /** Replaces the live SKILL.md of an existing distilled skill (through the agent's toolhost). */
  publishSkill: (agentId: string, name: string, text: string) => Promise<void>;
  locale: Locale;
  logger: Logger;
  clock: { now(): number };
};

export function createSkillLoop(options: SkillLoopOptions): SkillLoop {
  const { store, clock } = options;
  return {
    distill: (agentId, tag, request) => distill(options, agentId, tag, request),
    activate: (agentId, skillName, version, actor) => activate(options, agentId, skillName, version, actor),
    async maybeTrigger(agentId, tags) {
      const outcomes: SkillOutcome[] = [];
      const since = clock.now() - SKILL_TRIGGER.failureWindowMs;
      const runs = await store.distillRuns.byAgent(agentId, since);
      for (const tag of tags) {
        const failures = runs.filter((run) => run.outcome === "failure" && run.tags.split(" ").includes(tag)).length;
        if (
          (await liveLessons(options, agentId, tag)).length >= SKILL_TRIGGER.liveLessons ||
          failures >= SKILL_TRIGGER.failures
        )
          outcomes.push(await distill(options, agentId, tag));
      }
      return outcomes;
    },
    async recordUse(agentId, skillNames, success) {
      for (const name of skillNames)
        if (!(await recordTrialUse(options, agentId, name, success)))
          await judgeSkill(options, agentId, name, clock.now());
    },
    lessonsDeprecated: (agentId, lessonIds) => retractDeprecated(options, agentId, lessonIds),
    async curateSkills(agentId, now) {
      const retracted = await retractDeprecated(options, agentId);
      return [...retracted, ...(await curateSkills(options, agentId, now))];
    },
  };
}

async function activate(
  options: SkillLoopOptions,
  agentId: string,
  skillName: string,
  version: number,
  actor: string,
): Promise<SkillVersion> {
  const { store } = options;
  const target = (await store.skillVersions.versions(agentId, skillName)).find((row) => row.version === version);
  if (!target) throw new Error(`no version ${version} of ${skillName}`);
  const active = await store.skillVersions.active(agentId, skillName);
  if (active?.id === target.id) return restoreLive(options, target, actor);
  // A version brought back that was deprecated comes back as a draft, its counters afresh.
  const content = liveAgain(target.content);
  await options.publishSkill(agentId, skillName, content);
  const live = await store.transaction(async () => {
    if (active)
      await store.skillVersions.setStatus(active.id, "retired", {
        action: "retire",
        reason: `v${version} activated by ${actor}`,
        actor,
      });
    return store.skillVersions.setStatus(
      target.id,
      "active",
      { action: "activate", reason: `activated by ${actor}`, actor },
      { baselineRate: target.baselineRate, content },
    );
  });
  options.catalog(agentId).reload();
  return afterLive(options, live);
}

/** A version that went live again (it may be older than a lesson's deprecation) is checked at once. */
async function afterLive(options: SkillLoopOptions, live: SkillVersion): Promise<SkillVersion> {
  if (!(await retractSkill(options, live.agentId, live.skillName))) return live;
  return (await options.store.skillVersions.get(live.id)) ?? live;
}

/** Activating the live version: a deprecated one is restored as a draft (its counters afresh); else nothing changes. */
async function restoreLive(options: SkillLoopOptions, live: SkillVersion, actor: string): Promise<SkillVersion> {
  if (skillState(live.content) !== "deprecated") return live;
  const restored = await options.store.skillVersions.setLifecycle(live.id, liveAgain(live.content), {
    action: "restore",
    reason: `restored as a draft by ${actor}`,
    actor,
    from: "deprecated",
    to: "draft",
    restart: true,
  });
  await options.publishSkill(live.agentId, live.skillName, restored.content);
  options.catalog(live.agentId).reload();
  return afterLive(options, restored);
}

/**
 * One settled task's use of a distilled skill: counted on the live version, and on its
 * trial while it is on trial; a failed trial rolls the version back (returns true).
 */
async function recordTrialUse(
  options: SkillLoopOptions,
  agentId: string,
  name: string,
  success: boolean,
): Promise<boolean> {
  const { store } = options;
  // The use is counted and a failed trial rolled back in one step, so two tasks settling at once
  // never roll the same version back twice; the skill file is published after the commit.
  const rollback = await store.transaction(
    async () => {
      const active = await store.skillVersions.active(agentId, name);
      if (!active) return undefined;
      await store.skillVersions.recordUse(active.id, success, options.clock.now());
      if (active.trialUses >= 10 || trialVerdict(active) !== "continue") return undefined;
      const updated = await store.skillVersions.recordTrialUse(active.id, success);
      if (trialVerdict(updated) !== "rollback") return undefined;
      const previous = (await store.skillVersions.versions(agentId, name))
        .filter((row) => row.version < updated.version && row.status === "retired")
        .at(-1);
      const reason = `${updated.trialSuccesses}/${updated.trialUses} successes on trial vs ${Math.round((updated.baselineRate ?? 0) * 100)}% before`;
      await store.skillVersions.setStatus(updated.id, "rolled_back", { action: "rollback", reason, actor: "ratchet" });
      return { updated, previous, reason };
    },
    { lock: `skill:${agentId}:${name}` },
  );
  if (!rollback) return false;
  const { updated, previous, reason } = rollback;
  if (previous) {
    const content = liveAgain(previous.content);
    await options.publishSkill(agentId, name, content);
    await store.skillVersions.setStatus(
      previous.id,
      "active",
      { action: "reactivate", reason: `v${updated.version} rolled back`, actor: "ratchet" },
      { baselineRate: previous.baselineRate, content },
    );
    await retractDeprecated(options, agentId, [...citedLessons(content)]);
  } else {
    // Nothing earlier to go back to: the skill stays on disk, deprecated, so routing skips it.
    await options.publishSkill(agentId, name, withSkillState(updated.content, "deprecated"));
  }
  options.catalog(agentId).reload();
  options.logger.warn(
    { agentId, skill: name, version: updated.version, reason },
    "distilled skill version rolled back",
  );
  return true;
}
