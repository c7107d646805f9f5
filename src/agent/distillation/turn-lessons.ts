/**
 * The distillation loop's side of a turn: lessons chosen before routing (or the task held
 * out), and the answer's citation line parsed and counted. A new message first settles the
 * chat's previous task, since it may be the user correcting it.
 */
import { formatExperienceId } from "../../store/experiences-store.js";
import type { TurnLessons } from "../turn/turn-context.js";
import { extractCitations } from "./citations.js";
import { isHoldout, taskHoldoutKey } from "./holdout.js";
import { lessonsSection } from "./lessons-section.js";
import { selectLessons } from "./select-lessons.js";
import { looksLikeCorrection } from "./task-gates.js";
import { newTask, type DistillationOptions, type TaskBook, type TaskState } from "./task-state.js";

export function createTurnLessons(options: DistillationOptions, book: TaskBook): TurnLessons {
  const { store, settings, logger } = options;

  /** The chat's previous task settles (its outcome and curation stored) before this one's lessons are chosen. */
  async function settlePrevious(current: TaskState): Promise<TaskState | undefined> {
    const previous = book.waiting.get(current.sessionKey);
    if (!previous) {
      book.remember(current);
      return undefined;
    }
    if (looksLikeCorrection(current.userText)) previous.correction = current.userText;
    const recorded = book.settleInBackground(previous);
    book.remember(current);
    // Its distiller call, if any, still runs in the background.
    await recorded;
    return previous;
  }

  return {
    async select(task) {
      const current = newTask(task);
      const previous = await settlePrevious(current);
      // A correction follows up the previous task; it is not a new task to show lessons to.
      if (previous && previous.correction === task.userText) return undefined;
      const chosen = selectLessons(
        task.userText,
        (await store.experiences.list(task.agentId)).filter((lesson) => lesson.status !== "deprecated"),
      );
      if (chosen.length === 0) return undefined;
      current.selected = chosen.map((candidate) => candidate.lesson.id);
      const key = await taskHoldoutKey(store, task.traceId, settings.holdoutSeed ?? "");
      current.arm = isHoldout(key, settings.holdoutPercent) ? "holdout" : "treatment";
      await recordInjection(store, current);
      logger.info(
        { traceId: task.traceId, arm: current.arm, lessons: current.selected.map(formatExperienceId) },
        current.arm === "holdout" ? "lessons held out" : "lessons injected",
      );
      return current.arm === "treatment"
        ? lessonsSection(
            chosen.map((candidate) => candidate.lesson),
            settings.locale,
          )
        : undefined;
    },
    async strip(task, answer) {
      const current = book.tasks.get(task.traceId);
      // The loop is on: an unlabelled `[exp-3]` where citations stand is one (a phantom if it was not shown).
      const { answer: clean, cited } = extractCitations(answer, true);
      if (cited.length === 0) return clean;
      const real = await store.transaction(async () => {
        const injected = await store.injections.cite(task.traceId, cited);
        for (const id of [...injected].sort((a, b) => a - b)) await store.experiences.countUsed(id);
        return injected;
      });
      if (current) {
        current.cited = real;
        current.phantom = cited.length - real.length;
      }
      if (real.length < cited.length)
        logger.info(
          { traceId: task.traceId, phantom: cited.filter((id) => !real.includes(id)).map(formatExperienceId) },
          "phantom lesson citations ignored",
        );
      return clean;
    },
  };
}

/** The task's chosen lessons and arm, and each shown lesson's injection count, in one transaction. */
async function recordInjection(store: DistillationOptions["store"], task: TaskState): Promise<void> {
  await store.transaction(async () => {
    await store.injections.record(task.agentId, task.traceId, task.arm as "treatment" | "holdout", task.selected);
    // In id order: two turns counting overlapping lessons lock their rows in one order (no deadlock on PostgreSQL).
    if (task.arm === "treatment")
      for (const id of [...task.selected].sort((a, b) => a - b)) await store.experiences.countInjected(id);
  });
}
