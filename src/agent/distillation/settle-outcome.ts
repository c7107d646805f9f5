/**
 * The first half of settling a task: what the system saw of it (its facts), how it ended
 * (its outcome and kind), and who is told: the task's injection rows (the lessons'
 * evidence), the distilled skills it used, and the gap loop when the user said it went
 * wrong. An environment failure (outcome null) is evidence for nothing: no skill use is
 * counted for it and the lessons it was shown are neither credited nor blamed.
 */
import type { TurnReport } from "../turn/turn-context.js";
import { normalizeIntentKey } from "../gaps/intent-key.js";
import { taskOutcome, type TaskFacts, type TaskResult } from "./task-gates.js";
import type { DistillationOptions, NegativeOutcomeEvent, TaskState } from "./task-state.js";

/** The most of a correction or feedback text the gap loop is given. */
export const NEGATIVE_DETAIL_MAX_CHARS = 300;

export async function taskFacts(
  options: DistillationOptions,
  task: TaskState,
  alreadyDistilled: boolean,
): Promise<TaskFacts> {
  const { store } = options;
  const gaps = await store.gaps.byTrace(task.traceId);
  return {
    kind: (task.report as TurnReport).kind,
    gapClasses: gaps.map((gap) => gap.gapClass),
    gapReasons: gaps.map((gap) => gap.reason),
    unrecoveredToolFailure: gaps.some(
      (gap) =>
        gap.gapClass === "capability" &&
        (gap.reason === "tool_failure" || (gap.reason === "parse_failure" && Boolean(gap.tool))),
    ),
    environmentCauses: gaps.filter((gap) => gap.gapClass === "environment").map((gap) => gap.intentKey),
    toolCalls: (await store.toolCalls.byTrace(task.traceId)).map((call) => ({ ok: Boolean(call.ok) })),
    ...(task.correction !== undefined ? { correction: task.correction } : {}),
    ...(task.feedback ? { feedback: task.feedback } : {}),
    alreadyDistilled,
  };
}

/** Records the task's outcome where it is evidence, and tells the gap loop of a negative one. */
export async function recordOutcome(options: DistillationOptions, task: TaskState, facts: TaskFacts) {
  const result = taskOutcome(facts);
  await options.store.injections.settle(task.traceId, result.outcome, result.kind);
  const report = task.report as TurnReport;
  const distilledSkills = (report.route?.skills ?? []).filter((name) => name.startsWith("distilled-"));
  if (options.skills && distilledSkills.length > 0 && result.outcome !== null)
    await options.skills.recordUse(task.agentId, distilledSkills, result.outcome === "success");
  await tellNegativeOutcome(options, task, result);
  return result;
}

async function tellNegativeOutcome(options: DistillationOptions, task: TaskState, result: TaskResult): Promise<void> {
  if (!options.onNegativeOutcome || (result.kind !== "corrected" && result.kind !== "negative_feedback")) return;
  const report = task.report as TurnReport;
  const detail = result.kind === "corrected" ? (task.correction ?? "") : (task.feedback?.text ?? "");
  const event: NegativeOutcomeEvent = {
    agentId: task.agentId,
    traceId: task.traceId,
    sessionId: report.sessionId,
    ...(report.message.userId ? { userId: report.message.userId } : {}),
    userText: task.userText,
    intentKey: report.route?.intentKey ?? normalizeIntentKey("", task.userText),
    kind: result.kind,
    detail: detail.slice(0, NEGATIVE_DETAIL_MAX_CHARS),
  };
  try {
    await options.onNegativeOutcome(event);
  } catch (error) {
    // The gap loop's trouble never stops a task from settling.
    options.logger.error({ err: error, traceId: task.traceId }, "recording a negative outcome failed");
  }
}
