/**
 * Settling a task: its outcome from the facts (the turn's kind, gaps, tool calls, a
 * correction or feedback), then the gates; only a task that passes them costs a distiller
 * call, whose operations are checked and applied. The lessons the task was shown are
 * curated either way.
 */
import { terms, words } from "../../knowledge/keywords.js";
import type { ChatModel } from "../../llm/chat-model.js";
import { formatExperienceId, type Experience, type ExperienceSource } from "../../store/experiences-store.js";
import type { TaskOutcome } from "../../store/injections-store.js";
import type { TurnReport } from "../turn/turn-context.js";
import { applyOperations } from "./apply-operations.js";
import { curateLessons, type CurateChange } from "./curate.js";
import { aliasLessons, DISTILL_PROMPT_VERSION, MAX_ALIASES, proposeOperations } from "./distiller.js";
import { lessonMayBeShown, normalizeTags } from "./lesson-rules.js";
import { relevance } from "./select-lessons.js";
import { recordOutcome, taskFacts } from "./settle-outcome.js";
import { gateTask, type TaskFacts, type TaskOutcomeKind } from "./task-gates.js";
import type { DistillationOptions, SettleResult, TaskBook, TaskState } from "./task-state.js";
import { distillTranscript } from "./transcript.js";

type RunBase = {
  agentId: string;
  traceId: string;
  promptVersion: number;
  outcome: TaskOutcome | null;
  outcomeKind: TaskOutcomeKind;
  tags: string[];
  phantomCitations: number;
};

export async function settleTask(
  options: DistillationOptions,
  book: Pick<TaskBook, "tasks" | "waiting">,
  task: TaskState,
  beforeDistillerCall?: () => void,
): Promise<SettleResult> {
  const { store, settings } = options;
  book.waiting.delete(task.sessionKey);
  book.tasks.delete(task.traceId);
  const report = task.report as TurnReport;
  const priorRun = await store.distillRuns.get(task.traceId, DISTILL_PROMPT_VERSION);
  const facts = await taskFacts(options, task, priorRun?.status === "distilled");
  const { outcome, kind } = await recordOutcome(options, task, facts);
  const tags = taskTags(report);
  const gate = gateTask(facts);
  const runBase: RunBase = {
    agentId: task.agentId,
    traceId: task.traceId,
    promptVersion: DISTILL_PROMPT_VERSION,
    outcome,
    outcomeKind: kind,
    tags,
    phantomCitations: task.phantom,
  };
  const settled = { traceId: task.traceId, outcome, outcomeKind: kind };
  const skipGates = settings.dangerouslySkipGates === true && !facts.alreadyDistilled;
  if ((!gate.distill && !skipGates) || !options.model) {
    const reason = gate.distill ? "no model configured" : gate.reason;
    if (!facts.alreadyDistilled) await store.distillRuns.record({ ...runBase, status: "skipped", skipReason: reason });
    return { ...settled, skipped: reason, curated: await curateShown(options, task) };
  }
  return distillTask(
    options,
    options.model,
    { task, facts, runBase, source: gate.distill ? gate.source : "task_completion" },
    beforeDistillerCall,
  );
}

/** The distiller's call for a task that passed the gates, and its operations checked and applied. */
async function distillTask(
  options: DistillationOptions,
  model: ChatModel,
  input: { task: TaskState; facts: TaskFacts; runBase: RunBase; source: ExperienceSource },
  beforeDistillerCall?: () => void,
): Promise<SettleResult> {
  const { store, settings, logger } = options;
  const { task, facts, runBase, source } = input;
  const { outcome, outcomeKind, tags } = runBase;
  const settled = { traceId: task.traceId, outcome, outcomeKind };
  const { aliases, injectedIds, transcript, evidence, startedAt } = await distillerInput(options, task, facts, tags);
  beforeDistillerCall?.();
  const reply = await proposeOperations(
    model,
    // Only the harness's no-gates arm gets here with no outcome (an environment failure): not a success.
    { agentId: task.agentId, traceId: task.traceId, source, outcome: outcome ?? "failure", tags, transcript, evidence },
    aliases,
  );
  if (!reply.ok) {
    // Recorded in distill_runs for operators (`laoding experiences`); at info, so a chat
    // user on the console who just typed /feedback never sees an internal warning.
    logger.info({ traceId: task.traceId, problem: reply.error }, "distillation failed");
    await store.distillRuns.record({
      ...runBase,
      status: "failed",
      skipReason: reply.error,
      source,
      tokens: reply.tokens,
    });
    return { ...settled, skipped: reply.error, curated: await curateShown(options, task) };
  }
  const result = await applyOperations({
    store,
    agentId: task.agentId,
    traceId: task.traceId,
    source,
    taskTags: tags,
    aliases,
    injectedIds,
    ...(startedAt !== undefined ? { taskStartedAt: startedAt } : {}),
    userEvidence: [task.correction ?? "", task.feedback?.text ?? ""].join("\n"),
    operations: reply.operations,
    actor: "distiller",
    ...(settings.dangerouslySkipGates ? { dangerouslySkipChecks: true } : {}),
  });
  await store.distillRuns.record({
    ...runBase,
    status: "distilled",
    source,
    operations: result.applied.length,
    refused: result.refused.length,
    tokens: reply.tokens,
  });
  if (result.refused.length > 0)
    logger.info({ traceId: task.traceId, refused: result.refused }, "distiller operations refused");
  // Listed for operators (`laoding experiences list --status held`, the admin page): info, as above.
  for (const held of result.applied.filter((op) => op.op === "HOLD"))
    logger.info(
      { traceId: task.traceId, lesson: formatExperienceId(held.experienceId), why: held.why },
      "lesson held for an operator's approval",
    );
  logger.info(
    { traceId: task.traceId, applied: result.applied.map((op) => `${op.op} ${formatExperienceId(op.experienceId)}`) },
    "task distilled",
  );
  if (options.skills && result.applied.some((op) => op.op === "ADD")) {
    for (const outcomeOfSkill of await options.skills.maybeTrigger(task.agentId, tags))
      logger.info({ traceId: task.traceId, ...outcomeOfSkill }, "skill distillation");
  }
  return {
    ...settled,
    applied: result.applied.length,
    refused: result.refused.map((refusal) => refusal.reason),
    curated: await curateShown(options, task),
  };
}

/** What the distiller is shown of a task: the lessons it may name (aliases), the transcript and the evidence of its outcome. */
async function distillerInput(options: DistillationOptions, task: TaskState, facts: TaskFacts, tags: string[]) {
  const { store } = options;
  // The lessons this task was shown come first among the aliases, so a failure can contradict them.
  const shown = await lessonsById(options, task.selected);
  const similar = await similarLessons(options, task.agentId, `${task.userText} ${tags.join(" ")}`, shown);
  const aliases = aliasLessons([...shown, ...similar]);
  const injectedIds = new Set(task.arm === "treatment" ? task.selected : []);
  const messages = await store.messages.byTrace(task.traceId);
  const transcript = distillTranscript(
    messages,
    shown.filter((lesson) => injectedIds.has(lesson.id)).map((lesson) => lesson.summary),
    task.correction,
  );
  const evidence = [
    ...(task.correction !== undefined
      ? [`the user's next message corrected the answer: ${task.correction.slice(0, 300)}`]
      : []),
    ...(task.feedback
      ? [
          `the user's feedback: ${task.feedback.verdict}${task.feedback.text ? ` — ${task.feedback.text.slice(0, 300)}` : ""}`,
        ]
      : []),
    ...(facts.toolCalls.some((call) => !call.ok) ? ["a tool call failed during the task"] : []),
  ];
  // When the task began: a deprecated lesson it re-learns is revived only by evidence newer than its deprecation.
  const startedAt = messages[0]?.createdAt;
  return { aliases, injectedIds, transcript, evidence, startedAt };
}

/** The lessons with these ids that still exist, in the order given. */
async function lessonsById(options: DistillationOptions, ids: readonly number[]): Promise<Experience[]> {
  const lessons: Experience[] = [];
  for (const id of ids) {
    const lesson = await options.store.experiences.get(id);
    if (lesson) lessons.push(lesson);
  }
  return lessons;
}

async function curateShown(options: DistillationOptions, task: TaskState): Promise<CurateChange[]> {
  const shown = await lessonsById(options, task.selected);
  // A lesson deprecated here leaves the distilled skills that cite it (skill-retract.ts).
  return curateLessons(options.store, shown, options.clock.now(), "lifecycle", options.skills);
}

async function similarLessons(
  options: DistillationOptions,
  agentId: string,
  text: string,
  exclude: readonly Experience[],
): Promise<Experience[]> {
  const excluded = new Set(exclude.map((lesson) => lesson.id));
  const query = terms(text);
  return (
    (await options.store.experiences.list(agentId))
      // The distiller's prompt is a prompt too: a lesson the gate would not show is not an alias.
      .filter((lesson) => lesson.status !== "deprecated" && !excluded.has(lesson.id) && lessonMayBeShown(lesson))
      .map((lesson) => ({ lesson, score: relevance(query, lesson) }))
      .filter((candidate) => candidate.score > 0)
      .sort((left, right) => right.score - left.score || left.lesson.id - right.lesson.id)
      .slice(0, MAX_ALIASES)
      .map((candidate) => candidate.lesson)
  );
}

/** Tags a task shares with its lessons: the routed intent's words, else the message's first words. */
export function taskTags(report: TurnReport): string[] {
  const intent = report.route?.intentKey;
  const source = intent && intent !== "unknown" ? intent.split("-") : words(report.message.text).slice(0, 3);
  return normalizeTags(source).slice(0, 4);
}
