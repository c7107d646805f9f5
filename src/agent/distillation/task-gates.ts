/**
 * Deterministic gates in front of the distiller, and the task's outcome label. Both come
 * from what the system saw (turn kind, gaps, tool calls, the user's next message,
 * /feedback), never from a model's opinion. A gate that says no costs no model call.
 */
import type { ExperienceSource } from "../../store/experiences-store.js";
import type { TaskOutcome } from "../../store/injections-store.js";

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
  /** Tool call results in call order. */
  toolCalls: { ok: boolean }[];
  correction?: string;
  feedback?: { verdict: "good" | "bad"; text: string };
  alreadyDistilled: boolean;
};

export type GateDecision = { distill: true; source: ExperienceSource } | { distill: false; reason: string };

export function taskOutcome(facts: TaskFacts): TaskOutcome {
  if (facts.feedback) return facts.feedback.verdict === "good" ? "success" : "failure";
  if (facts.correction !== undefined || facts.kind !== "answered") return "failure";
  const last = facts.toolCalls.at(-1);
  return last && !last.ok ? "failure" : "success";
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
    taskOutcome(facts) === "success"
  )
    return { distill: true, source: "error_correction" };
  if (taskOutcome(facts) === "failure") return { distill: false, reason: "an unresolved failure" };
  if (facts.toolCalls.length >= 2) return { distill: true, source: "task_completion" };
  return { distill: false, reason: "a routine success" };
}

const CORRECTION_START =
  /^\s*(no\b|nope\b|wrong\b|incorrect\b|not quite\b|actually\b|that'?s (not|wrong|incorrect)\b|that (did ?n[o']t|does ?n[o']t) work\b|it (still )?(fails|failed|did ?n[o']t work)\b|you (forgot|missed|should have)\b|不对|错了|不是这样|不行|没用|还是不行|还是失败|还是报错|你(忘了|漏了|应该))/i;

/** The user's next message corrects the bot's answer. */
export function looksLikeCorrection(text: string): boolean {
  return CORRECTION_START.test(text);
}
