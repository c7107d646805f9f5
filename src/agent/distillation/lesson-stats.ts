/**
 * Reads one lesson's LessonStats out of the injection log. Only injections since the
 * lesson last changed status count: a restored or revived lesson starts with a clean
 * slate, and a promotion or a revalidation is judged afresh. A task whose outcome is null
 * (an environment failure) or not yet known is no use of the lesson.
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { isConflicting, isNegativeClaim } from "./lesson-rules.js";
import { LIFECYCLE, tagHoldout, type LessonStats } from "./lifecycle.js";
import { statusAfter, statusBefore } from "./revive-lesson.js";

/** Ledger actions that change a lesson's status, for entries that do not record it before and after. */
const STATUS_ACTIONS = ["promote", "deprecate", "restore", "approve", "revive", "revalidate", "rollback"];

/** When the lesson last changed status, and by which ledger action (none: since it was created). */
export async function statusChange(store: Store, lesson: Experience): Promise<{ at: number; action?: string }> {
  const changes = (await store.ledger.bySubject("experience", formatExperienceId(lesson.id))).filter((entry) => {
    const before = statusBefore(entry);
    const after = statusAfter(entry);
    if (before !== undefined && after !== undefined) return before !== after;
    return STATUS_ACTIONS.includes(entry.action) || entry.action.startsWith("manual");
  });
  const last = changes.at(-1);
  return last ? { at: last.createdAt, action: last.action } : { at: 0 };
}

export async function statusSince(store: Store, lesson: Experience): Promise<number> {
  return (await statusChange(store, lesson)).at;
}

export async function lessonStats(store: Store, lesson: Experience, now: number): Promise<LessonStats> {
  const change = await statusChange(store, lesson);
  const since = change.at;
  const rows = (await store.injections.byExperience(lesson.id)).filter((row) => row.createdAt >= since);
  const treatment = rows.filter((row) => row.arm === "treatment");
  const recent = treatment.filter((row) => row.createdAt >= now - LIFECYCLE.staleWindowMs);
  const citing = treatment.filter((row) => row.cited === 1);
  const uses = treatment.filter((row) => row.outcome !== null);
  const lastSuccess = uses.map((row) => row.outcome).lastIndexOf("success");
  const holdout = tagHoldout(lesson, await store.injections.holdoutTasks(lesson.agentId));
  const latest = uses.slice(-LIFECYCLE.recentUses);
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
      n: citing.filter((row) => row.outcome !== null).length,
      successes: citing.filter((row) => row.outcome === "success").length,
    },
    holdout: { n: holdout.length, successes: holdout.filter((task) => task.outcome === "success").length },
    uses: uses.length,
    successes: uses.filter((row) => row.outcome === "success").length,
    citedSuccesses: new Set(citing.filter((row) => row.outcome === "success").map((row) => row.traceId)).size,
    trailingFailures: uses.length - 1 - lastSuccess,
    recent: { n: latest.length, successes: latest.filter((row) => row.outcome === "success").length },
    statusAgeMs: now - Math.max(since, lesson.createdAt),
    revalidating: change.action === "revalidate",
    negativeClaim: isNegativeClaim(lesson.summary),
  };
}
