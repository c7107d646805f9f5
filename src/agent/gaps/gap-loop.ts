/**
 * The capability-gap loop: gaps are recorded with merged intent keys; after each turn the
 * clusters its gaps belong to are evaluated; a capability cluster that reaches
 * GAP_DRAFT_TRIGGER_COUNT events from at least two sessions gets a skill draft
 * (`auto-<intent-key>`), unless a draft or a strongly overlapping skill exists, in which
 * case the cluster is linked to it (draft-decision.ts). The catalog is reloaded at once,
 * so the draft is routable on the next message. Environment gaps are never drafted.
 * A task the user corrected or gave negative /feedback (the distillation loop tells it)
 * is a gap too, reason `negative_outcome`, evaluated the same way.
 */
import type { NegativeOutcomeEvent } from "../distillation/task-state.js";
import type { TurnReport } from "../turn/turn-context.js";
import { KeyedSerialQueue } from "../session-queue.js";
import { decide, type DraftOutcome, type DraftParts } from "./draft-decision.js";
import { createGapRecorder, type GapRecorder, type RecordedGap } from "./gap-recorder.js";
import { canonicalIntentKey } from "./intent-merge.js";

export type { DraftOutcome, GapLoopSettings } from "./draft-decision.js";

/** Turns whose gaps wait for their after-turn evaluation; a turn that died never collects its own. */
const MAX_PENDING_TURNS = 1_000;

export type GapLoop = {
  recordGap: GapRecorder;
  afterTurn(turn: TurnReport): Promise<DraftOutcome[]>;
  /** A task the user corrected or gave negative /feedback: a capability gap, its cluster evaluated (never rejects). */
  recordNegativeOutcome(event: NegativeOutcomeEvent): Promise<void>;
  /** Evaluates one cluster now (used by afterTurn; exposed for operators and tests). */
  evaluate(agentId: string, intentKey: string, reason: string): Promise<DraftOutcome>;
  sinceMs(): number;
};

/** What a draft decision works with (draft-decision.ts), the clock optional: the system's by default. */
export type GapLoopOptions = Omit<DraftParts, "clock" | "sinceMs"> & { clock?: { now(): number } };

export function createGapLoop(options: GapLoopOptions): GapLoop {
  const { store, settings, logger } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const sinceMs = () => clock.now() - settings.lookbackHours * 3_600_000;
  const parts: DraftParts = { ...options, clock, sinceMs };
  const pending = new Map<string, RecordedGap[]>();
  const draftQueue = new KeyedSerialQueue();

  const recordGap = createGapRecorder({
    gaps: store.gaps,
    logger,
    // The operators' environment notice counts its once-per-hour on the loop's clock.
    clock,
    canonicalKey: (agentId, intentKey) => canonicalIntentKey(store.clusters, agentId, intentKey, sinceMs()),
    // The key merge reads the agent's registry then writes it: replicas take turns on it, agent by agent.
    atomically: (agentId, work) => store.transaction(work, { lock: `gap-intent-keys:${agentId}` }),
    onRecorded: (gap) => {
      pending.set(gap.traceId, [...(pending.get(gap.traceId) ?? []), gap]);
      if (pending.size > MAX_PENDING_TURNS) pending.delete(pending.keys().next().value as string);
    },
  });

  async function evaluate(agentId: string, intentKey: string, reason: string): Promise<DraftOutcome> {
    const stats = await store.clusters.cluster({ agentId, intentKey, reason }, sinceMs());
    if (!stats) return { action: "skipped", why: "no gaps in the lookback window" };
    if (stats.gapClass !== "capability") return { action: "skipped", why: "environment gaps are never drafted" };
    if (stats.count < settings.triggerCount)
      return { action: "skipped", why: `${stats.count} of ${settings.triggerCount} events` };
    if (stats.sessions < 2) return { action: "skipped", why: "all events come from one session" };
    // One draft decision per agent at a time: two crossings of one cluster give one draft.
    return draftQueue.run(agentId, () => decide(parts, stats));
  }

  /** Each capability cluster of `gaps` evaluated once; a failure is logged, never thrown. */
  async function evaluateClusters(traceId: string, gaps: RecordedGap[]): Promise<DraftOutcome[]> {
    const clusters = new Map(
      gaps.filter((gap) => gap.gapClass === "capability").map((gap) => [`${gap.intentKey}\u0000${gap.reason}`, gap]),
    );
    const outcomes: DraftOutcome[] = [];
    for (const gap of clusters.values()) {
      try {
        outcomes.push(await evaluate(gap.agentId, gap.intentKey, gap.reason));
      } catch (error) {
        logger.error({ err: error, traceId, intentKey: gap.intentKey }, "gap cluster evaluation failed");
      }
    }
    return outcomes;
  }

  return {
    recordGap,
    sinceMs,
    evaluate,
    afterTurn: (turn) => evaluateClusters(turn.traceId, takeGaps(pending, turn.traceId)),
    async recordNegativeOutcome(event) {
      const id = await recordGap({
        agentId: event.agentId,
        sessionId: event.sessionId,
        traceId: event.traceId,
        intentKey: event.intentKey,
        reason: "negative_outcome",
        // The words are capped where the event is made (NEGATIVE_DETAIL_MAX_CHARS); the kind is added in front.
        detail: `${event.kind}: ${event.detail}`,
        userText: event.userText,
        ...(event.userId ? { userId: event.userId } : {}),
      });
      if (id === undefined) return;
      // The task's own turn collected its gaps long ago: this one is evaluated now.
      await evaluateClusters(
        event.traceId,
        takeGaps(pending, event.traceId, (gap) => gap.id === id),
      );
    },
  };
}

/** The gaps of `traceId` recorded since its last collection (those `only` keeps), taken out of the waiting list. */
function takeGaps(
  pending: Map<string, RecordedGap[]>,
  traceId: string,
  only?: (gap: RecordedGap) => boolean,
): RecordedGap[] {
  const gaps = pending.get(traceId) ?? [];
  const taken = only ? gaps.filter(only) : gaps;
  const left = gaps.filter((gap) => !taken.includes(gap));
  if (left.length > 0) pending.set(traceId, left);
  else pending.delete(traceId);
  return taken;
}

export { LINK_OVERLAP, overlappingSkill } from "./overlapping-skill.js";
