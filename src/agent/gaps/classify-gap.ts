/**
 * Capability vs environment. A capability gap means the bot lacks know-how (it can be
 * taught with a skill); an environment gap means the world failed (provider down,
 * toolhost unavailable, machine timeouts, a command missing from the host). Environment
 * gaps are kept and shown but never drafted into skills. Rules: docs/gaps.md.
 */
import type { GapClass } from "../../store/gaps-store.js";

export type GapReason = "no_skill" | "parse_failure" | "tool_failure" | "step_budget" | "model_failure";

const ENVIRONMENT_TOOL_CODES = new Set(["TIMEOUT", "TOOLHOST_UNAVAILABLE", "TOOLHOST_CRASHED", "INTERNAL"]);

export function classifyGap(reason: GapReason, details: { errorCode?: string; detail?: string } = {}): GapClass {
  switch (reason) {
    case "model_failure":
      return "environment";
    case "tool_failure":
      if (details.errorCode && ENVIRONMENT_TOOL_CODES.has(details.errorCode)) return "environment";
      // A program the host does not have is the machine's problem, not the bot's know-how.
      if (details.errorCode === "EXIT_NONZERO" && /command not found|exit(ed with)? code 127/i.test(details.detail ?? "")) return "environment";
      return "capability";
    default:
      return "capability";
  }
}
