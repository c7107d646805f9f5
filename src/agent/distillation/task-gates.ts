/**
 * Deterministic gates in front of the distiller, and the task's outcome label. Both come
 * from what the system saw (turn kind, gaps, tool calls, the user's next message,
 * /feedback), never from a model's opinion. A gate that says no costs no model call.
 */
import type { ExperienceSource } from "../../store/experiences-store.js";
import type { TaskOutcome, TaskOutcomeKind } from "../../store/injections-store.js";

export type { TaskOutcomeKind } from "../../store/injections-store.js";

/** How a turn ended, as the orchestrator reports it. */
export type TurnKind =
  | "answered"
  | "step_budget"
  | "cancelled"
  | "timeout"
  | "model_failure"
  | "internal_error"
  | "no_model"
  | "command";

export type TaskFacts = {
  kind: TurnKind;
  gapClasses: ("capability" | "environment")[];
  /** The reasons of the task's gaps (report_gap's "reported", …). */
  gapReasons?: string[];
  /**
   * A tool failure the turn never recovered from that no audit row shows failed (an unknown
   * tool, bad arguments): the turn records those as capability gaps naming the tool.
   */
  unrecoveredToolFailure?: boolean;
  /** The causes of its environment-class gaps (docs/gaps.md: model-unavailable, tool-timeout, …). */
  environmentCauses?: string[];
  /** Tool call results in call order. */
  toolCalls: { ok: boolean }[];
  correction?: string;
  feedback?: { verdict: "good" | "bad"; text: string };
  alreadyDistilled: boolean;
};

export type GateDecision = { distill: true; source: ExperienceSource } | { distill: false; reason: string };

/** A task's outcome and how it came about; `outcome: null` (an environment failure) is evidence for nothing. */
export type TaskResult = { outcome: TaskOutcome | null; kind: TaskOutcomeKind };

/** Turns that ended because the model, a host or the bot itself failed, not because of anything a lesson said. */
const ENVIRONMENT_KINDS: readonly TurnKind[] = ["model_failure", "internal_error", "no_model", "command"];

/**
 * The outcome, from what the system saw. An environment failure comes first: whatever the
 * user says after an outage is about the outage, not about a lesson. Then the user's own
 * verdict (/feedback, then a correction), then how the turn ended, then its last tool call.
 */
export function taskOutcome(facts: TaskFacts): TaskResult {
  if (ENVIRONMENT_KINDS.includes(facts.kind)) return { outcome: null, kind: "environment" };
  if (facts.feedback)
    return facts.feedback.verdict === "good"
      ? { outcome: "success", kind: "success" }
      : { outcome: "failure", kind: "negative_feedback" };
  if (facts.correction !== undefined) return { outcome: "failure", kind: "corrected" };
  if (facts.kind === "step_budget") return { outcome: "failure", kind: "step_budget" };
  if (facts.kind === "cancelled" || facts.kind === "timeout") return { outcome: "failure", kind: "abandoned" };
  const hostDown = hostWasDown(facts);
  // A host, the sandbox or a tool server down, and no tool call worked: the environment's failure.
  if (hostDown && !facts.toolCalls.some((call) => call.ok)) return { outcome: null, kind: "environment" };
  const reasons = facts.gapReasons ?? [];
  if (reasons.includes("reported")) return { outcome: "failure", kind: "reported" };
  const last = facts.toolCalls.at(-1);
  if ((!last || last.ok) && !facts.unrecoveredToolFailure) return { outcome: "success", kind: "success" };
  // A last tool call that failed because a host or the sandbox was down is the environment's failure.
  return hostDown ? { outcome: null, kind: "environment" } : { outcome: "failure", kind: "failed_tool" };
}

/**
 * Causes that say nothing about the host: a command that hung past the timeout the model
 * chose, or a program the lesson named that is not installed, may be the lesson's doing.
 * In an outcome they are the task's failure, not the environment's (they stay environment
 * gaps for operators).
 */
const MAYBE_THE_LESSONS_DOING = new Set(["tool-timeout", "command-missing"]);

function hostWasDown(facts: TaskFacts): boolean {
  if (!facts.gapClasses.includes("environment")) return false;
  const causes = facts.environmentCauses;
  return causes === undefined || causes.some((cause) => !MAYBE_THE_LESSONS_DOING.has(cause));
}

export function gateTask(facts: TaskFacts): GateDecision {
  if (facts.kind === "command") return { distill: false, reason: "a command" };
  if (facts.alreadyDistilled) return { distill: false, reason: "already distilled" };
  if (["cancelled", "timeout", "model_failure", "internal_error", "no_model"].includes(facts.kind))
    return { distill: false, reason: `provider or timeout failure (${facts.kind})` };
  if (facts.gapClasses.includes("environment")) return { distill: false, reason: "an environment-class gap" };
  if (facts.feedback) return { distill: true, source: "review_finding" };
  if (facts.correction !== undefined) return { distill: true, source: "error_correction" };
  const firstFailure = facts.toolCalls.findIndex((call) => !call.ok);
  if (
    firstFailure >= 0 &&
    facts.toolCalls.slice(firstFailure + 1).some((call) => call.ok) &&
    taskOutcome(facts).outcome === "success"
  )
    return { distill: true, source: "error_correction" };
  if (taskOutcome(facts).outcome === "failure") return { distill: false, reason: "an unresolved failure" };
  if (facts.toolCalls.length >= 2) return { distill: true, source: "task_completion" };
  return { distill: false, reason: "a routine success" };
}

const CORRECTION_START =
  /^\s*(no\b|nope\b|wrong\b|incorrect\b|not quite\b|actually\b|that'?s (not|wrong|incorrect)\b|that (did ?n[o']t|does ?n[o']t) work\b|it (still )?(fails|failed|did ?n[o']t work)\b|you (forgot|missed|should have)\b|不对|错了|不是这样|不行|没用|还是不行|还是失败|还是报错|你(忘了|漏了|应该))/i;

/** "No thanks", "nope, all good", "no, that's perfect", "actually, can you also …", "不用了，谢谢": a reply that starts like a correction but approves or moves on. */
const NOT_A_CORRECTION =
  /^\s*(no|nope|nah)\b[\s,.!]*(thanks?\b|thank you\b|thx\b|problem\b|worries\b|(that'?s|it'?s|that is|it is) (all|it|fine|ok|okay|good|great|perfect)\b|all good\b|(i'?m|i am) (good|fine|ok|okay)\b|(perfect|great)\b)|^\s*actually\b[\s,]*((can|could|would|will) you|what|how|(i'?m|i am) (good|fine|ok|okay)|never ?mind|thanks?\b)|^\s*(不用了|不用，|不用,|没问题|不错|不是这样的话)/i;

/** The user's next message corrects the bot's answer. */
export function looksLikeCorrection(text: string): boolean {
  return CORRECTION_START.test(text) && !NOT_A_CORRECTION.test(text);
}
