/**
 * Applies the lifecycle to lessons and ledgers each change; run after each settled task,
 * daily, and by `laoding experiences curate`. A lesson stored before the text checks grew
 * is never shown (the read-time gate sees to that); here it is also retired, or held for
 * an operator, so the lists say why it is not shown. Given the skill loop, a deprecation
 * is told to it after the commit, so no distilled skill keeps carrying the lesson's advice.
 */
import type { Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { lessonsLock } from "./apply-operations.js";
import { holdLesson } from "./lesson-hold.js";
import { checkLessonText } from "./lesson-rules.js";
import { lessonStats } from "./lesson-stats.js";
import { nextTransition } from "./lifecycle.js";
import type { SkillLoop } from "./skill-loop.js";

export type CurateChange = { experienceId: number; from: string; to: string; reason: string };

/** Confidence a lesson gets when evidence (cited uses whose tasks succeeded) promotes it. */
export const PROMOTED_CONFIDENCE = 0.7;

export async function curateLessons(
  store: Store,
  lessons: readonly Experience[],
  now: number,
  actor = "lifecycle",
  skills?: Pick<SkillLoop, "lessonsDeprecated">,
): Promise<CurateChange[]> {
  const changes: CurateChange[] = [];
  const deprecated = new Map<string, number[]>();
  for (const lesson of lessons) {
    // One lesson at a time, read and changed in one transaction: a lesson curated twice at once changes once.
    const change = await store.transaction(() => curateOne(store, lesson.id, now, actor), {
      lock: lessonsLock(lesson.agentId),
    });
    if (!change) continue;
    changes.push(change);
    if (change.to === "deprecated")
      deprecated.set(lesson.agentId, [...(deprecated.get(lesson.agentId) ?? []), change.experienceId]);
  }
  // After the commit: the skills publish through the agent's toolhost.
  for (const [agentId, ids] of deprecated) await skills?.lessonsDeprecated(agentId, ids);
  return changes;
}

async function curateOne(store: Store, id: number, now: number, actor: string): Promise<CurateChange | undefined> {
  const current = await store.experiences.get(id);
  if (!current || current.status === "deprecated") return undefined;
  const check = checkLessonText(current.summary);
  if (!check.ok && !(check.hold && current.approvedBy !== null)) {
    const reason = check.hold ? check.reason : `refused by today's lesson checks: ${check.reason}`;
    if (check.hold) await holdLesson(store, current, reason, actor);
    else
      await store.experiences.change(
        current.id,
        { status: "deprecated", deprecatedReason: reason },
        { action: "refuse", reason, actor },
      );
    return { experienceId: current.id, from: current.status, to: "deprecated", reason };
  }
  const transition = nextTransition(current, await lessonStats(store, current, now));
  if (!transition) return undefined;
  await store.experiences.change(
    current.id,
    transition.to === "deprecated"
      ? { status: "deprecated", deprecatedReason: transition.reason }
      : transition.to === "active"
        ? { status: "active", confidence: Math.max(current.confidence, PROMOTED_CONFIDENCE) }
        : { status: transition.to },
    { action: transition.action, reason: transition.reason, actor },
  );
  return { experienceId: current.id, from: current.status, to: transition.to, reason: transition.reason };
}

export async function curateAgent(
  store: Store,
  agentId: string,
  now: number,
  actor = "lifecycle",
): Promise<CurateChange[]> {
  return curateLessons(
    store,
    (await store.experiences.list(agentId)).filter((lesson) => lesson.status !== "deprecated"),
    now,
    actor,
  );
}
