/**
 * Records a gap with its class; recording never breaks a turn. A capability gap is keyed
 * by what the user wanted (merged into the agent's known keys); an environment gap by its
 * cause (store/gap-causes.ts), never by the user's words, and never merged: every outage
 * of one kind is one cluster per agent. Operators hear of environment gaps through
 * environment-notice.ts, at most once per hour per agent and cause.
 */
import type { Logger } from "pino";
import { environmentCause } from "../../store/gap-causes.js";
import type { GapClass, GapsStore } from "../../store/gaps-store.js";
import type { GapReason } from "./classify-gap.js";
import { createEnvironmentNotice, type EnvironmentNotice } from "./environment-notice.js";

export type GapEvent = {
  agentId: string;
  sessionId?: number;
  traceId: string;
  intentKey: string;
  reason: GapReason;
  tool?: string;
  errorCode?: string;
  detail?: string;
  userText?: string;
  userId?: string;
};

/** Resolves to the gap's id, or undefined when it could not be stored (never rejects). */
export type GapRecorder = (event: GapEvent) => Promise<number | undefined>;

export type RecordedGap = GapEvent & { id: number; gapClass: GapClass; rawIntentKey: string };

export function createGapRecorder(options: {
  gaps: GapsStore;
  logger: Logger;
  /** Maps a capability key to the agent's canonical one (similar keys merged); identity by default. */
  canonicalKey?: (agentId: string, intentKey: string) => string | Promise<string>;
  onRecorded?: (gap: RecordedGap) => void;
  /** Runs the key merge and the insert of one agent's gap as one unit (one transaction, one commit). */
  atomically?: <T>(agentId: string, work: () => Promise<T>) => Promise<T>;
  /** The clock of the operators' notice (its once-per-hour). */
  clock?: { now(): number };
  /** Tells operators of environment gaps; by default a warn log line per agent and cause at most once per hour. */
  environmentNotice?: EnvironmentNotice;
}): GapRecorder {
  const { gaps, logger } = options;
  const notice =
    options.environmentNotice ??
    createEnvironmentNotice({
      logger,
      clock: options.clock ?? { now: () => Date.now() },
      countSince: (agentId, cause, sinceMs) => gaps.countCauseSince(agentId, cause, sinceMs),
    });
  return async (event) => {
    try {
      const cause = environmentCause(event);
      const gapClass: GapClass = cause ? "environment" : "capability";
      const store = async () => {
        const intentKey = cause ?? (await options.canonicalKey?.(event.agentId, event.intentKey)) ?? event.intentKey;
        return { intentKey, id: await gaps.record({ ...event, intentKey, rawIntentKey: event.intentKey, gapClass }) };
      };
      // An environment gap reads and writes no key registry: nothing to run as one unit.
      const { intentKey, id } =
        options.atomically && !cause ? await options.atomically(event.agentId, store) : await store();
      logger.info(
        { traceId: event.traceId, agentId: event.agentId, gapId: id, reason: event.reason, gapClass, intentKey },
        cause ? "environment gap recorded" : "capability gap recorded",
      );
      options.onRecorded?.({ ...event, intentKey, rawIntentKey: event.intentKey, id, gapClass });
      if (cause) await notice(event.agentId, cause);
      return id;
    } catch (error) {
      logger.error({ err: error, traceId: event.traceId }, "could not record a capability gap");
      return undefined;
    }
  };
}
