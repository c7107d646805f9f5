/**
 * Capability vs environment. A capability gap means the bot lacks know-how (it can be
 * taught with a skill); an environment gap means the world failed (provider down,
 * toolhost unavailable, machine timeouts, a command missing from the host). Environment
 * gaps are kept and shown but never drafted into skills. Rules: docs/gaps.md.
 */
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

const ENVIRONMENT_TOOL_CODES = new Set(["TIMEOUT", "TOOLHOST_UNAVAILABLE", "TOOLHOST_CRASHED", "INTERNAL"]);

export function classifyGap(reason: GapReason, details: { errorCode?: string; detail?: string } = {}): GapClass {
  switch (reason) {
    case "model_failure":
      return "environment";
    case "tool_failure":
      if (details.errorCode && ENVIRONMENT_TOOL_CODES.has(details.errorCode)) return "environment";
      // A program the host does not have is the machine's problem, not the bot's know-how.
      if (
        details.errorCode === "EXIT_NONZERO" &&
        /command not found|exit(ed with)? code 127/i.test(details.detail ?? "")
      )
        return "environment";
      return "capability";
    default:
      return "capability";
  }
}
