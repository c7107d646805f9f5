/**
 * Applies the lifecycle to lessons and ledgers each change; run after each settled task,
 * daily, and by `laoding experiences curate`. A lesson stored before the text checks grew
 * is never shown (the read-time gate sees to that); here it is also retired, or held for
 * an operator, so the lists say why it is not shown.
 */
import type { Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { holdLesson } from "./lesson-hold.js";
import { checkLessonText } from "./lesson-rules.js";
import { lessonStats } from "./lesson-stats.js";
import { nextTransition } from "./lifecycle.js";

export type CurateChange = { experienceId: number; from: string; to: string; reason: string };

/** Confidence a lesson gets when evidence (citations in real tasks) promotes it. */
export const PROMOTED_CONFIDENCE = 0.7;

export function curateLessons(store: Store, lessons: readonly Experience[], now: number, actor = "lifecycle"): CurateChange[] {
  const changes: CurateChange[] = [];
  for (const lesson of lessons) {
    const current = store.experiences.get(lesson.id);
    if (!current || current.status === "deprecated") continue;
    const check = checkLessonText(current.summary);
    if (!check.ok && !(check.hold && current.approvedBy !== null)) {
      const reason = check.hold ? check.reason : `refused by today's lesson checks: ${check.reason}`;
      if (check.hold) holdLesson(store, current, reason, actor);
      else store.experiences.change(current.id, { status: "deprecated", deprecatedReason: reason }, { action: "refuse", reason, actor });
      changes.push({ experienceId: current.id, from: current.status, to: "deprecated", reason });
      continue;
    }
    const transition = nextTransition(current, lessonStats(store, current, now));
    if (!transition) continue;
    store.experiences.change(
      current.id,
      transition.to === "deprecated"
        ? { status: "deprecated", deprecatedReason: transition.reason }
        : { status: transition.to, confidence: Math.max(current.confidence, PROMOTED_CONFIDENCE) },
      { action: transition.action, reason: transition.reason, actor },
    );
    changes.push({ experienceId: current.id, from: current.status, to: transition.to, reason: transition.reason });
  }
  return changes;
}

export function curateAgent(store: Store, agentId: string, now: number, actor = "lifecycle"): CurateChange[] {
  return curateLessons(store, store.experiences.list(agentId).filter((lesson) => lesson.status !== "deprecated"), now, actor);
}
