/**
 * The distillation loop, Level 1. Per task: lessons are chosen before routing (or the
 * task is held out), the answer's citation line is parsed, and after the reply the task
 * waits for its outcome. The outcome is settled at the user's next message in that chat
 * (which may correct the bot), at /feedback, or after a quiet period, whichever comes
 * first; then the gates run, and only a task that passes them costs a distiller call.
 * Settling never delays a reply: the distiller runs in the background (`idle()` waits).
 */
import type { Logger } from "pino";
import { terms, words } from "../../knowledge/keywords.js";
import type { ChatModel } from "../../llm/chat-model.js";
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import type { TurnLessons, TurnReport } from "../orchestrator.js";
import { applyOperations } from "./apply-operations.js";
import { extractCitations } from "./citations.js";
import { curateAgent, curateLessons, type CurateChange } from "./curate.js";
import { aliasLessons, DISTILL_PROMPT_VERSION, MAX_ALIASES, proposeOperations } from "./distiller.js";
import { isHoldout } from "./holdout.js";
import { lessonMayBeShown, normalizeTags } from "./lesson-rules.js";
import { lessonsSection } from "./lessons-section.js";
import { relevance, selectLessons } from "./select-lessons.js";
import { gateTask, looksLikeCorrection, taskOutcome, type TaskFacts } from "./task-gates.js";
import type { SkillLoop } from "./skill-loop.js";
import { distillTranscript } from "./transcript.js";
import type { Locale } from "../texts.js";

export type DistillationSettings = {
  locale: Locale;
  holdoutPercent: number;
  /** A task nobody followed up settles after this much quiet (DISTILL_SETTLE_QUIET_MS). */
  settleQuietMs: number;
  /** The efficacy harness's no-gates arm only: every task is distilled and operations are not checked. */
  dangerouslySkipGates?: boolean;
};

/** Tasks waiting for their outcome; beyond this the oldest settle at once. */
const MAX_PENDING_TASKS = 1_000;

type TaskState = {
  agentId: string;
  traceId: string;
  sessionKey: string;
  userText: string;
  selected: number[];
  arm?: "treatment" | "holdout";
  cited: number[];
  phantom: number;
  report?: TurnReport;
  endedAt?: number;
  correction?: string;
  feedback?: { verdict: "good" | "bad"; text: string };
};

export type SettleResult = { traceId: string; outcome: "success" | "failure"; skipped?: string; applied?: number; refused?: string[]; curated: CurateChange[] };

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

export function createDistillationLoop(options: { store: Store; model: ChatModel | undefined; settings: DistillationSettings; logger: Logger; clock: { now(): number }; skills?: SkillLoop }): DistillationLoop {
  const { store, settings, logger, clock } = options;
  const tasks = new Map<string, TaskState>();
  const waiting = new Map<string, TaskState>();
  const work = new Set<Promise<unknown>>();

  function state(traceId: string): TaskState | undefined {
    return tasks.get(traceId);
  }

  const lessons: TurnLessons = {
    async select(task) {
      // A new message settles the chat's previous task: it may be the user correcting it.
      const previous = waiting.get(task.sessionKey);
      const current: TaskState = { agentId: task.agentId, traceId: task.traceId, sessionKey: task.sessionKey, userText: task.userText, selected: [], cited: [], phantom: 0 };
      if (previous) {
        if (looksLikeCorrection(task.userText)) previous.correction = task.userText;
        const recorded = settleInBackground(previous);
        remember(current);
        // The previous task's outcome and curation are in the store before this task's lessons are
        // chosen (its distiller call, if any, still runs in the background).
        await recorded;
      } else remember(current);
      // A correction follows up the previous task; it is not a new task to show lessons to.
      if (previous && previous.correction === task.userText) return undefined;
      const chosen = selectLessons(task.userText, (await store.experiences.list(task.agentId)).filter((lesson) => lesson.status !== "deprecated"));
      if (chosen.length === 0) return undefined;
      current.selected = chosen.map((candidate) => candidate.lesson.id);
      current.arm = isHoldout(task.traceId, settings.holdoutPercent) ? "holdout" : "treatment";
      await store.transaction(async () => {
        await store.injections.record(task.agentId, task.traceId, current.arm as "treatment" | "holdout", current.selected);
        if (current.arm === "treatment") for (const id of current.selected) await store.experiences.countInjected(id);
      });
      logger.info({ traceId: task.traceId, arm: current.arm, lessons: current.selected.map(formatExperienceId) }, current.arm === "holdout" ? "lessons held out" : "lessons injected");
      return current.arm === "treatment" ? lessonsSection(chosen.map((candidate) => candidate.lesson), settings.locale) : undefined;
    },
    async strip(task, answer) {
      const { answer: clean, cited } = extractCitations(answer);
      if (cited.length === 0) return clean;
      const real = await store.transaction(async () => {
        const injected = await store.injections.cite(task.traceId, cited);
        for (const id of injected) await store.experiences.countUsed(id);
        return injected;
      });
      const current = state(task.traceId);
      if (current) {
        current.cited = real;
        current.phantom = cited.length - real.length;
      }
      if (real.length < cited.length) logger.info({ traceId: task.traceId, phantom: cited.filter((id) => !real.includes(id)).map(formatExperienceId) }, "phantom lesson citations ignored");
      return clean;
    },
  };

  function remember(task: TaskState): void {
    tasks.set(task.traceId, task);
    if (tasks.size > MAX_PENDING_TASKS) tasks.delete(tasks.keys().next().value as string);
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    work.add(promise);
    void promise.finally(() => work.delete(promise)).catch(() => undefined);
    return promise;
  }

  /**
   * Settles `task` off the caller's path. The returned promise (it never rejects) resolves
   * once the task's outcome is recorded and, when it is not distilled, its shown lessons
   * curated; or, when it is, just before the distiller call, which is never waited for.
   */
  function settleInBackground(task: TaskState): Promise<void> {
    let recorded!: () => void;
    const untilRecorded = new Promise<void>((resolve) => (recorded = resolve));
    void track(settle(task, recorded))
      .catch((error: unknown) => logger.error({ err: error, traceId: task.traceId }, "settling a task failed"))
      .finally(recorded);
    return untilRecorded;
  }

  /** A task still waiting for its outcome; a task another caller began settling is not settled twice. */
  function isWaiting(task: TaskState): boolean {
    return waiting.get(task.sessionKey) === task;
  }

  async function settle(task: TaskState, beforeDistillerCall?: () => void): Promise<SettleResult> {
    waiting.delete(task.sessionKey);
    tasks.delete(task.traceId);
    const report = task.report as TurnReport;
    const priorRun = await store.distillRuns.get(task.traceId, DISTILL_PROMPT_VERSION);
    const facts: TaskFacts = {
      kind: report.kind,
      gapClasses: (await store.gaps.byTrace(task.traceId)).map((gap) => gap.gapClass),
      toolCalls: (await store.toolCalls.byTrace(task.traceId)).map((call) => ({ ok: Boolean(call.ok) })),
      ...(task.correction !== undefined ? { correction: task.correction } : {}),
      ...(task.feedback ? { feedback: task.feedback } : {}),
      alreadyDistilled: priorRun?.status === "distilled",
    };
    const outcome = taskOutcome(facts);
    const tags = taskTags(report);
    const gate = gateTask(facts);
    const runBase = { agentId: task.agentId, traceId: task.traceId, promptVersion: DISTILL_PROMPT_VERSION, outcome, tags, phantomCitations: task.phantom };
    await store.injections.settle(task.traceId, outcome);
    const distilledSkills = (report.route?.skills ?? []).filter((name) => name.startsWith("distilled-"));
    if (options.skills && distilledSkills.length > 0) await options.skills.recordUse(task.agentId, distilledSkills, outcome === "success");
    const skipGates = settings.dangerouslySkipGates === true && !facts.alreadyDistilled;
    if ((!gate.distill && !skipGates) || !options.model) {
      const reason = gate.distill ? "no model configured" : gate.reason;
      if (!facts.alreadyDistilled) await store.distillRuns.record({ ...runBase, status: "skipped", skipReason: reason });
      return { traceId: task.traceId, outcome, skipped: reason, curated: await curateShown(task) };
    }
    // The lessons this task was shown come first among the aliases, so a failure can contradict them.
    const shown = await lessonsById(task.selected);
    const similar = await similarLessons(task.agentId, `${task.userText} ${tags.join(" ")}`, shown);
    const aliases = aliasLessons([...shown, ...similar]);
    const injectedIds = new Set(task.arm === "treatment" ? task.selected : []);
    const messages = await store.messages.byTrace(task.traceId);
    const transcript = distillTranscript(messages, shown.filter((lesson) => injectedIds.has(lesson.id)).map((lesson) => lesson.summary), task.correction);
    const evidence = [
      ...(task.correction !== undefined ? [`the user's next message corrected the answer: ${task.correction.slice(0, 300)}`] : []),
      ...(task.feedback ? [`the user's feedback: ${task.feedback.verdict}${task.feedback.text ? ` — ${task.feedback.text.slice(0, 300)}` : ""}`] : []),
      ...(facts.toolCalls.some((call) => !call.ok) ? ["a tool call failed during the task"] : []),
    ];
    const source = gate.distill ? gate.source : "task_completion";
    beforeDistillerCall?.();
    const reply = await proposeOperations(options.model, { agentId: task.agentId, traceId: task.traceId, source, outcome, tags, transcript, evidence }, aliases);
    if (!reply.ok) {
      // Recorded in distill_runs for operators (`laoding experiences`); at info, so a chat
      // user on the console who just typed /feedback never sees an internal warning.
      logger.info({ traceId: task.traceId, problem: reply.error }, "distillation failed");
      await store.distillRuns.record({ ...runBase, status: "failed", skipReason: reply.error, source, tokens: reply.tokens });
      return { traceId: task.traceId, outcome, skipped: reply.error, curated: await curateShown(task) };
    }
    const result = await applyOperations({ store, agentId: task.agentId, traceId: task.traceId, source, taskTags: tags, aliases, injectedIds, operations: reply.operations, actor: "distiller", ...(settings.dangerouslySkipGates ? { dangerouslySkipChecks: true } : {}) });
    await store.distillRuns.record({ ...runBase, status: "distilled", source, operations: result.applied.length, refused: result.refused.length, tokens: reply.tokens });
    if (result.refused.length > 0) logger.info({ traceId: task.traceId, refused: result.refused }, "distiller operations refused");
    // Listed for operators (`laoding experiences list --status held`, the admin page): info, as above.
    for (const held of result.applied.filter((op) => op.op === "HOLD")) logger.info({ traceId: task.traceId, lesson: formatExperienceId(held.experienceId), why: held.why }, "lesson held for an operator's approval");
    logger.info({ traceId: task.traceId, applied: result.applied.map((op) => `${op.op} ${formatExperienceId(op.experienceId)}`) }, "task distilled");
    if (options.skills && result.applied.some((op) => op.op === "ADD")) {
      for (const outcomeOfSkill of await options.skills.maybeTrigger(task.agentId, tags)) logger.info({ traceId: task.traceId, ...outcomeOfSkill }, "skill distillation");
    }
    return { traceId: task.traceId, outcome, applied: result.applied.length, refused: result.refused.map((refusal) => refusal.reason), curated: await curateShown(task) };
  }

  /** The lessons with these ids that still exist, in the order given. */
  async function lessonsById(ids: readonly number[]): Promise<Experience[]> {
    const lessons: Experience[] = [];
    for (const id of ids) {
      const lesson = await store.experiences.get(id);
      if (lesson) lessons.push(lesson);
    }
    return lessons;
  }

  async function curateShown(task: TaskState): Promise<CurateChange[]> {
    return curateLessons(store, await lessonsById(task.selected), clock.now());
  }

  async function similarLessons(agentId: string, text: string, exclude: readonly Experience[]): Promise<Experience[]> {
    const excluded = new Set(exclude.map((lesson) => lesson.id));
    const query = terms(text);
    return (await store.experiences.list(agentId))
      // The distiller's prompt is a prompt too: a lesson the gate would not show is not an alias.
      .filter((lesson) => lesson.status !== "deprecated" && !excluded.has(lesson.id) && lessonMayBeShown(lesson))
      .map((lesson) => ({ lesson, score: relevance(query, lesson) }))
      .filter((candidate) => candidate.score > 0)
      .sort((left, right) => right.score - left.score || left.lesson.id - right.lesson.id)
      .slice(0, MAX_ALIASES)
      .map((candidate) => candidate.lesson);
  }

  /** The chat request: every tag with at least 3 live lessons, debounce waived. */
  async function distillAsked(agentId: string): Promise<void> {
    const counts = new Map<string, number>();
    for (const lesson of await store.experiences.list(agentId)) if (lesson.status !== "deprecated") for (const tag of lesson.tags) counts.set(tag, (counts.get(tag) ?? 0) + 1);
    for (const [tag, count] of [...counts].sort((left, right) => right[1] - left[1] || left[0].localeCompare(right[0]))) {
      if (count >= 3) logger.info({ agentId, tag, ...(await options.skills?.distill(agentId, tag, { asked: true })) }, "skill distillation asked in chat");
    }
  }

  return {
    lessons,
    afterTurn(report) {
      const task = tasks.get(report.traceId) ?? { agentId: report.message.agentId, traceId: report.traceId, sessionKey: report.sessionKey, userText: report.message.text, selected: [], cited: [], phantom: 0 };
      task.report = report;
      task.endedAt = clock.now();
      if (options.skills && report.message.isOperator && DISTIL_REQUEST.test(report.message.text)) void track(distillAsked(report.message.agentId)).catch((error: unknown) => logger.error({ err: error }, "asked skill distillation failed"));
      const previous = waiting.get(report.sessionKey);
      // Registering the task is instant: the previous one settles in the background.
      if (previous && previous !== task) void settleInBackground(previous);
      waiting.set(report.sessionKey, task);
      if (waiting.size > MAX_PENDING_TASKS) void settleInBackground(waiting.values().next().value as TaskState);
    },
    async feedback(sessionKey, verdict, text) {
      const task = waiting.get(sessionKey);
      if (!task) return undefined;
      task.feedback = { verdict, text };
      return track(settle(task));
    },
    async settleQuiet() {
      const due = [...waiting.values()].filter((task) => (task.endedAt ?? 0) + settings.settleQuietMs <= clock.now());
      const results: SettleResult[] = [];
      for (const task of due) if (isWaiting(task)) results.push(await track(settle(task)));
      return results;
    },
    async flush() {
      const results: SettleResult[] = [];
      for (const task of [...waiting.values()]) if (isWaiting(task)) results.push(await track(settle(task)));
      return results;
    },
    curate: (agentId) => curateAgent(store, agentId, clock.now()),
    async idle() {
      while (work.size > 0) await Promise.allSettled([...work]);
    },
  };
}

/** Tags a task shares with its lessons: the routed intent's words, else the message's first words. */
export function taskTags(report: TurnReport): string[] {
  const intent = report.route?.intentKey;
  const source = intent && intent !== "unknown" ? intent.split("-") : words(report.message.text).slice(0, 3);
  return normalizeTags(source).slice(0, 4);
}
