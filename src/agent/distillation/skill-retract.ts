/**
 * A distilled skill never carries a deprecated lesson's advice. When a lesson that a
 * skill's live version cites is deprecated (the lessons' lifecycle tells the skill loop at
 * once; the daily round checks every live skill, so skills written before this rule and
 * lessons deprecated by other paths are cleaned up too), the bullets that cite only
 * deprecated lessons are retracted: the live SKILL.md is published without them, ledgered
 * as `retract` with the lessons and why they were deprecated. A retraction is not a new
 * version, so the ratchet's "keeps 75% of the bullets" does not apply. A bullet that also
 * cites a live lesson stays. A skill left with no heuristic or anti-pattern bullet is
 * deprecated instead, through its lifecycle (`status: deprecated`), with the same reason.
 */
import { formatExperienceId } from "../../store/experiences-store.js";
import type { SkillVersion } from "../../store/skill-versions-store.js";
import { skillState, withSkillState, type SkillLifecycleChange } from "./skill-lifecycle.js";
import type { SkillLoopOptions } from "./skill-loop.js";
import { citedLessons } from "./skill-ratchet.js";
import { allBullets, bulletLessonIds, skillBullets, withoutDeadBullets } from "./skill-sections.js";

export type SkillRetraction = SkillLifecycleChange & {
  action: "retract" | "deprecate";
  /** The deprecated lessons whose bullets went. */
  lessons: number[];
  /** How many bullets went. */
  dropped: number;
};

type Plan = { text: string; dropped: number; lessons: number[]; reason: string; deprecate: boolean };

/**
 * Every live distilled skill of the agent (with `lessonIds`, only those citing one of
 * them) loses the bullets that cite only deprecated lessons. Never throws: a skill that
 * cannot be published is logged and checked again in the next daily round.
 */
export async function retractDeprecated(
  options: SkillLoopOptions,
  agentId: string,
  lessonIds?: readonly number[],
): Promise<SkillRetraction[]> {
  const retractions: SkillRetraction[] = [];
  const live = (await options.store.skillVersions.all(agentId)).filter((row) => row.status === "active");
  for (const row of live) {
    const cited = citedLessons(row.content);
    if (lessonIds && !lessonIds.some((id) => cited.has(id))) continue;
    try {
      const retraction = await retractSkill(options, agentId, row.skillName);
      if (retraction) retractions.push(retraction);
    } catch (error) {
      options.logger.error(
        { err: error, agentId, skill: row.skillName },
        "retracting deprecated lessons from a distilled skill failed",
      );
    }
  }
  return retractions;
}

/** One skill's live version checked now; a change is stored and ledgered, then published and the catalog reloaded. */
export async function retractSkill(
  options: SkillLoopOptions,
  agentId: string,
  name: string,
): Promise<SkillRetraction | undefined> {
  const { store } = options;
  const change = await store.transaction(
    async () => {
      const live = await store.skillVersions.active(agentId, name);
      // A deprecated skill is not routed; it is checked again if it is restored.
      if (!live || skillState(live.content) === "deprecated") return undefined;
      const plan = await planRetraction(options, live);
      if (!plan) return undefined;
      const from = skillState(live.content);
      const to = plan.deprecate ? "deprecated" : from;
      const updated = await store.skillVersions.setLifecycle(
        live.id,
        plan.deprecate ? withSkillState(live.content, "deprecated") : plan.text,
        {
          action: plan.deprecate ? "deprecate" : "retract",
          reason: plan.reason,
          actor: "skill-lifecycle",
          from,
          to,
          ...(plan.deprecate ? {} : { bullets: allBullets(plan.text).length }),
        },
      );
      return { updated, plan, from, to };
    },
    { lock: `skill:${agentId}:${name}` },
  );
  if (!change) return undefined;
  const { updated, plan, from, to } = change;
  // Stored first, published after the commit, as the lifecycle's other changes are.
  await options.publishSkill(agentId, name, updated.content);
  options.catalog(agentId).reload();
  options.logger.info(
    { agentId, skill: name, version: updated.version, dropped: plan.dropped, to, reason: plan.reason },
    plan.deprecate ? "distilled skill deprecated: its lessons were deprecated" : "distilled skill bullets retracted",
  );
  return {
    skillName: name,
    version: updated.version,
    from,
    to,
    reason: plan.reason,
    action: plan.deprecate ? "deprecate" : "retract",
    lessons: plan.lessons,
    dropped: plan.dropped,
  };
}

/** What the live version loses: the bullets citing only deprecated (or missing) lessons; undefined when none. */
async function planRetraction(options: SkillLoopOptions, live: SkillVersion): Promise<Plan | undefined> {
  const why = new Map<number, string>();
  for (const id of citedLessons(live.content)) {
    const lesson = await options.store.experiences.get(id);
    if (!lesson) why.set(id, `${formatExperienceId(id)} no longer exists`);
    else if (lesson.status === "deprecated")
      why.set(id, `${formatExperienceId(id)} was deprecated: ${lesson.deprecatedReason ?? "no reason recorded"}`);
  }
  if (why.size === 0) return undefined;
  const { text, dropped } = withoutDeadBullets(live.content, new Set(why.keys()));
  if (dropped.length === 0) return undefined;
  const lessons = [...new Set(dropped.flatMap(bulletLessonIds))].sort((left, right) => left - right);
  const advice = skillBullets(text, "heuristics").length + skillBullets(text, "antiPatterns").length;
  return {
    text,
    dropped: dropped.length,
    lessons,
    reason: lessons.map((id) => why.get(id)).join("; "),
    deprecate: advice === 0,
  };
}
