/**
 * Capability vs environment. A capability gap means the bot lacks know-how (it can be
 * taught with a skill); an environment gap means the world failed (provider down,
 * toolhost unavailable, machine timeouts, a command missing from the host), and is keyed
 * by its cause (store/gap-causes.ts). Environment gaps are kept and shown apart, but
 * never drafted into skills. Rules: docs/gaps.md.
 */
import { environmentCause, type EnvironmentCause } from "../../store/gap-causes.js";
import type { GapClass } from "../../store/gaps-store.js";
import { text, type Locale, type TextKey } from "../texts.js";

export type GapReason =
  | "no_skill"
  | "parse_failure"
  | "tool_failure"
  | "step_budget"
  | "model_failure"
  /** The model said it cannot do the task (the report_gap tool). */
  | "reported"
  /** The user corrected the answer or gave negative /feedback. */
  | "negative_outcome";

/** The reason codes in words: what people read (chat, `laoding gaps`); `--json` and the admin API keep the codes. */
const REASON_WORDS: Record<GapReason, TextKey> = {
  no_skill: "gapReasonNoSkill",
  parse_failure: "gapReasonParseFailure",
  tool_failure: "gapReasonToolFailure",
  step_budget: "gapReasonStepBudget",
  model_failure: "gapReasonModelFailure",
  reported: "gapReasonReported",
  negative_outcome: "gapReasonNegativeOutcome",
};

const CLASS_WORDS: Record<GapClass, TextKey> = { capability: "gapClassCapability", environment: "gapClassEnvironment" };

/** A stored reason in words; a code this version does not know (older data) is shown as stored. */
export function gapReasonWords(locale: Locale, reason: string): string {
  return Object.hasOwn(REASON_WORDS, reason) ? text(locale, REASON_WORDS[reason as GapReason]) : reason;
}

export function gapClassWords(locale: Locale, gapClass: GapClass): string {
  return Object.hasOwn(CLASS_WORDS, gapClass) ? text(locale, CLASS_WORDS[gapClass]) : gapClass;
}

/** An environment cause in words (chat, `laoding gaps`, the operators' notice); `--json` and the admin API keep the code. */
const CAUSE_WORDS: Record<EnvironmentCause, TextKey> = {
  "model-unavailable": "gapCauseModelUnavailable",
  "model-rate-limited": "gapCauseModelRateLimited",
  "model-timeout": "gapCauseModelTimeout",
  "model-auth-failed": "gapCauseModelAuthFailed",
  "model-bad-request": "gapCauseModelBadRequest",
  "model-bad-response": "gapCauseModelBadResponse",
  "sandbox-unavailable": "gapCauseSandboxUnavailable",
  "toolhost-unavailable": "gapCauseToolhostUnavailable",
  "tool-timeout": "gapCauseToolTimeout",
  "mcp-unavailable": "gapCauseMcpUnavailable",
  "command-missing": "gapCauseCommandMissing",
  other: "gapCauseOther",
};

/** A cause in words; a cause this version does not know is shown as stored. */
export function gapCauseWords(locale: Locale, cause: string): string {
  return Object.hasOwn(CAUSE_WORDS, cause) ? text(locale, CAUSE_WORDS[cause as EnvironmentCause]) : cause;
}

/** Environment when a cause rule names the failure (every model failure, the host's faults), else capability. */
export function classifyGap(reason: GapReason, details: { errorCode?: string; detail?: string } = {}): GapClass {
  return environmentCause({ reason, ...details }) ? "environment" : "capability";
}
