/**
 * Reads one lesson's LessonStats out of the injection log. Only injections since the
 * lesson last changed status count: a restored lesson starts with a clean slate, and a
 * promotion is judged afresh.
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { isConflicting } from "./lesson-rules.js";
import { LIFECYCLE, type LessonStats } from "./lifecycle.js";

export async function statusSince(store: Store, lesson: Experience): Promise<number> {
  const changes = (await store.ledger.bySubject("experience", formatExperienceId(lesson.id))).filter(
    (entry) => ["promote", "restore", "rollback"].includes(entry.action) || entry.action.startsWith("manual"),
  );
  return changes.at(-1)?.createdAt ?? 0;
}

export async function lessonStats(store: Store, lesson: Experience, now: number): Promise<LessonStats> {
  const since = await statusSince(store, lesson);
  const rows = (await store.injections.byExperience(lesson.id)).filter((row) => row.createdAt >= since);
  const treatment = rows.filter((row) => row.arm === "treatment");
  const recent = treatment.filter((row) => row.createdAt >= now - LIFECYCLE.staleWindowMs);
  const citing = treatment.filter((row) => row.cited === 1);
  const tags = new Set(lesson.tags);
  // The holdout on the lesson's own tags when it is big enough to judge by, else the agent's whole holdout.
  const allHoldout = await store.injections.holdoutTasks(lesson.agentId);
  const onTags = allHoldout.filter((task) => task.tags.some((tag) => tags.has(tag)));
  const holdout = onTags.length >= LIFECYCLE.harmfulMinN ? onTags : allHoldout;
  const conflicting =
    lesson.status === "draft"
      ? (await store.experiences.list(lesson.agentId, "active")).find(
          (other) => other.id !== lesson.id && isConflicting(other.summary, lesson.summary),
        )
      : undefined;
  return {
    ...(conflicting ? { conflictingActive: formatExperienceId(conflicting.id) } : {}),
    injected: treatment.length,
    cited: citing.length,
    citedTasks: new Set(citing.map((row) => row.traceId)).size,
    injectedRecent: recent.length,
    citedRecent: recent.filter((row) => row.cited === 1).length,
    citing: {
      n: citing.filter((row) => row.outcome).length,
      successes: citing.filter((row) => row.outcome === "success").length,
    },
    holdout: { n: holdout.length, successes: holdout.filter((task) => task.outcome === "success").length },
  };
}
