/**
 * The distillation loop, Level 1. Per task: lessons are chosen before routing (or the
 * task is held out), the answer's citation line is parsed, and after the reply the task
 * waits for its outcome. The outcome is settled at the user's next message in that chat
 * (which may correct the bot), at /feedback, or after a quiet period, whichever comes
 * first; then the gates run, and only a task that passes them costs a distiller call.
 * Settling never delays a reply: the distiller runs in the background (`idle()` waits).
 */
import { curateAgent, type CurateChange } from "./curate.js";
import { settleTask } from "./settle-task.js";
import {
  MAX_PENDING_TASKS,
  newTask,
  type DistillationOptions,
  type SettleResult,
  type TaskBook,
  type TaskState,
} from "./task-state.js";
import { createTurnLessons } from "./turn-lessons.js";
import type { TurnLessons, TurnReport } from "../turn/turn-context.js";

export type { DistillationSettings, SettleResult } from "./task-state.js";
export { taskTags } from "./settle-task.js";

export type DistillationLoop = {
  lessons: TurnLessons;
  afterTurn(report: TurnReport): void;
  /** `/feedback good|bad [text]` on the chat's last task; settles it. */
  feedback(sessionKey: string, verdict: "good" | "bad", text: string): Promise<SettleResult | undefined>;
  /** Settles the tasks that have been quiet for the settle period. */
  settleQuiet(): Promise<SettleResult[]>;
  /** Settles every waiting task now (shutdown, tests, the eval harness). */
  flush(): Promise<SettleResult[]>;
  curate(agentId: string): Promise<CurateChange[]>;
  idle(): Promise<void>;
};

/** An operator asking in chat for the lessons to be turned into skills. */
const DISTIL_REQUEST = /把最近的经验整理一下|整理(一下)?最近的经验|\bdistil+ (the )?recent lessons\b/i;

export function createDistillationLoop(options: DistillationOptions): DistillationLoop {
  const { store, settings, logger, clock } = options;
  const work = new Set<Promise<unknown>>();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    work.add(promise);
    void promise.finally(() => work.delete(promise)).catch(() => undefined);
    return promise;
  };
  const book = createTaskBook(options, track);
  const { waiting } = book;
  const settle = (task: TaskState) => track(settleTask(options, book, task));
  /** A task still waiting for its outcome; a task another caller began settling is not settled twice. */
  const isWaiting = (task: TaskState) => waiting.get(task.sessionKey) === task;

  return {
    lessons: createTurnLessons(options, book),
    afterTurn(report) {
      const task =
        book.tasks.get(report.traceId) ??
        newTask({
          agentId: report.message.agentId,
          traceId: report.traceId,
          sessionKey: report.sessionKey,
          userText: report.message.text,
        });
      task.report = report;
      task.endedAt = clock.now();
      if (options.skills && report.message.isOperator && DISTIL_REQUEST.test(report.message.text))
        void track(distillAsked(options, report.message.agentId)).catch((error: unknown) =>
          logger.error({ err: error }, "asked skill distillation failed"),
        );
      const previous = waiting.get(report.sessionKey);
      // Registering the task is instant: the previous one settles in the background.
      if (previous && previous !== task) void book.settleInBackground(previous);
      waiting.set(report.sessionKey, task);
      if (waiting.size > MAX_PENDING_TASKS) void book.settleInBackground(waiting.values().next().value as TaskState);
    },
    async feedback(sessionKey, verdict, text) {
      const task = waiting.get(sessionKey);
      if (!task) return undefined;
      task.feedback = { verdict, text };
      return settle(task);
    },
    async settleQuiet() {
      const due = [...waiting.values()].filter((task) => (task.endedAt ?? 0) + settings.settleQuietMs <= clock.now());
      const results: SettleResult[] = [];
      for (const task of due) if (isWaiting(task)) results.push(await settle(task));
      return results;
    },
    async flush() {
      const results: SettleResult[] = [];
      for (const task of [...waiting.values()]) if (isWaiting(task)) results.push(await settle(task));
      return results;
    },
    async curate(agentId) {
      const changes = await curateAgent(store, agentId, clock.now());
      // The distilled skills' lifecycle runs in the same daily round (30 days unused is checked here, and
      // every live skill drops the bullets of lessons deprecated since, by whatever path).
      await options.skills?.curateSkills(agentId, clock.now());
      return changes;
    },
    async idle() {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
  };
}

/** The loop's tasks, and settling one off the caller's path (its work tracked for `idle()`). */
function createTaskBook(options: DistillationOptions, track: <T>(promise: Promise<T>) => Promise<T>): TaskBook {
  const tasks = new Map<string, TaskState>();
  const waiting = new Map<string, TaskState>();
  const book: TaskBook = {
    tasks,
    waiting,
    remember(task) {
      tasks.set(task.traceId, task);
      if (tasks.size > MAX_PENDING_TASKS) tasks.delete(tasks.keys().next().value as string);
    },
    /**
     * The returned promise (it never rejects) resolves once the task's outcome is recorded
     * and, when it is not distilled, its shown lessons curated; or, when it is, just before
     * the distiller call, which is never waited for.
     */
    settleInBackground(task) {
      let recorded!: () => void;
      const untilRecorded = new Promise<void>((resolve) => (recorded = resolve));
      void track(settleTask(options, book, task, recorded))
        .catch((error: unknown) =>
          options.logger.error({ err: error, traceId: task.traceId }, "settling a task failed"),
        )
        .finally(recorded);
      return untilRecorded;
    },
  };
  return book;
}

/** The chat request: every tag with at least 3 live lessons, debounce waived. */
async function distillAsked(options: DistillationOptions, agentId: string): Promise<void> {
  const counts = new Map<string, number>();
  for (const lesson of await options.store.experiences.list(agentId))
    if (lesson.status !== "deprecated") for (const tag of lesson.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  for (const [tag, count] of [...counts].sort((left, right) => right[1] - left[1] || left[0].localeCompare(right[0]))) {
    if (count >= 3)
      options.logger.info(
        { agentId, tag, ...(await options.skills?.distill(agentId, tag, { asked: true })) },
        "skill distillation asked in chat",
      );
  }
}
