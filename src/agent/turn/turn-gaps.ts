/**
 * The gaps a model-backed turn records, and when: only real failures (docs/gaps.md).
 *
 * - A tool failure the turn did not recover from: after a final answer, the failed calls
 *   that no later successful toolhost call followed (so the last call failed) make one
 *   gap, of the last of them. A failure followed by a success was recovered: no gap.
 * - An environment-class tool failure (TIMEOUT, TOOLHOST_UNAVAILABLE, TOOLHOST_CRASHED,
 *   INTERNAL, a missing command) is recorded as it happens: the world failed, whatever
 *   the turn did next.
 * - The model's own `report_gap` (at most one per turn), the step budget (answer.ts), a
 *   routing reply that could not be parsed (route.ts).
 * A turn routed to no skill that answers without any of these is not a gap. When it does
 * fail, its capability gap's detail ends with "(no skill matched)".
 */
import { classifyGap } from "../gaps/classify-gap.js";
import type { GapEvent } from "../gaps/gap-recorder.js";
import { createReportGap } from "../react/report-gap.js";
import type { ToolObservation } from "../react/react-loop.js";
import type { ToolFailureReport } from "../react/tool-executor.js";
import type { RouteDecision } from "../routing/route-message.js";
import type { ToolCall } from "../../llm/chat-model.js";
import type { TurnContext } from "./turn-context.js";

export const NO_SKILL_NOTE = "no skill matched";

export type TurnGap = Pick<GapEvent, "reason" | "tool" | "errorCode" | "detail">;

/** Records one gap of this turn under the route's intent key; a capability gap of a turn routed to no skill says so. */
export function recordTurnGap(turn: TurnContext, route: RouteDecision, gap: TurnGap): Promise<number | undefined> {
  const gapClass = classifyGap(gap.reason, {
    ...(gap.errorCode ? { errorCode: gap.errorCode } : {}),
    ...(gap.detail ? { detail: gap.detail } : {}),
  });
  // At the end, within the stored detail's 1,000 characters.
  const detail =
    route.gap === "no_skill" && gapClass === "capability"
      ? gap.detail
        ? `${gap.detail.slice(0, 900)} (${NO_SKILL_NOTE})`
        : NO_SKILL_NOTE
      : gap.detail;
  return turn.env.recordGap({
    ...turn.gapBase,
    intentKey: route.intentKey,
    ...gap,
    ...(detail ? { detail } : {}),
  });
}

export type ToolFailures = {
  /** The executor's failure report: an environment-class one is recorded now, the others wait. */
  onFailure(report: ToolFailureReport): Promise<void>;
  /** A toolhost call's observation: a success recovers every failure before it. */
  observed(observation: ToolObservation): ToolObservation;
  /** After a final answer: the unrecovered failures (if any) become the turn's gap. */
  settle(): Promise<void>;
};

export function trackToolFailures(turn: TurnContext, route: RouteDecision): ToolFailures {
  let unrecovered: ToolFailureReport[] = [];
  const asGap = (report: ToolFailureReport, detail = report.reason): TurnGap => ({
    reason: report.kind,
    tool: report.tool,
    errorCode: report.code,
    detail,
  });
  return {
    async onFailure(report) {
      // A call cut short by a cancel says nothing about what the agent can do.
      if (turn.signal.aborted) return;
      const gapClass = classifyGap(report.kind, { errorCode: report.code, detail: report.reason });
      if (gapClass === "environment") await recordTurnGap(turn, route, asGap(report));
      else unrecovered.push(report);
    },
    observed(observation) {
      if (observation.ok) unrecovered = [];
      return observation;
    },
    async settle() {
      const last = unrecovered.at(-1);
      if (!last || turn.signal.aborted) return;
      const others = unrecovered.slice(0, -1).map((report) => `${report.tool} ${report.code}`);
      turn.log.info({ failed: unrecovered.length }, "the turn ended without recovering from a tool failure");
      await recordTurnGap(
        turn,
        route,
        asGap(last, others.length > 0 ? `${last.reason} (also failed: ${others.join(", ")})` : last.reason),
      );
    },
  };
}

/** The turn's `report_gap` handler: a valid report is a capability gap, reason "reported". */
export function reportGapHandler(
  turn: TurnContext,
  route: RouteDecision,
): (call: ToolCall) => Promise<ToolObservation> {
  return createReportGap(async (report) => {
    turn.log.info({ missing: report.missing }, "the model reported a gap");
    await recordTurnGap(turn, route, {
      reason: "reported",
      detail: `missing: ${report.missing}; asked: ${report.asked}`,
    });
  });
}
