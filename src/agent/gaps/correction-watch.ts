/**
 * Corrections become gaps with the distillation loop off too. That loop settles each task
 * and hears the user's correction (docs/distillation.md); without it, this keeps each
 * chat's last answered turn and hands a correction of it to the gap loop as a negative
 * outcome, the same event the loop would send.
 */
import { looksLikeCorrection } from "../distillation/task-gates.js";
import type { NegativeOutcomeEvent } from "../distillation/task-state.js";
import { NEGATIVE_DETAIL_MAX_CHARS } from "../distillation/settle-outcome.js";
import type { TurnReport } from "../turn/turn-context.js";
import { normalizeIntentKey } from "./intent-key.js";

/** Chats remembered at once; the oldest is forgotten past this. */
const MAX_CHATS = 1_000;

export function createCorrectionWatch(
  recordNegativeOutcome: (event: NegativeOutcomeEvent) => Promise<void>,
  /** As the loop: a turn nobody followed up within `settleQuietMs` (DISTILL_SETTLE_QUIET_MS) has settled. */
  options: { settleQuietMs: number; clock?: { now(): number } },
): (turn: TurnReport) => Promise<void> {
  const clock = options.clock ?? { now: () => Date.now() };
  const lastTurn = new Map<string, { turn: TurnReport; endedAt: number }>();
  return async (turn) => {
    const last = lastTurn.get(turn.sessionKey);
    lastTurn.delete(turn.sessionKey);
    if (turn.kind === "answered" || turn.kind === "step_budget")
      lastTurn.set(turn.sessionKey, { turn, endedAt: clock.now() });
    if (lastTurn.size > MAX_CHATS) lastTurn.delete(lastTurn.keys().next().value as string);
    const previous = last && clock.now() - last.endedAt <= options.settleQuietMs ? last.turn : undefined;
    if (!previous || previous.sessionId !== turn.sessionId || !looksLikeCorrection(turn.message.text)) return;
    await recordNegativeOutcome({
      agentId: previous.message.agentId,
      traceId: previous.traceId,
      sessionId: previous.sessionId,
      ...(previous.message.userId ? { userId: previous.message.userId } : {}),
      userText: previous.message.text,
      intentKey: previous.route?.intentKey ?? normalizeIntentKey("", previous.message.text),
      kind: "corrected",
      detail: turn.message.text.slice(0, NEGATIVE_DETAIL_MAX_CHARS),
    });
  };
}
