/** Records a capability gap with its class; recording never breaks a turn. */
import type { Logger } from "pino";
import type { GapClass, GapsStore } from "../../store/gaps-store.js";
import { classifyGap, type GapReason } from "./classify-gap.js";

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
  /** Maps a key to the agent's canonical one (similar keys merged); identity by default. */
  canonicalKey?: (agentId: string, intentKey: string) => string | Promise<string>;
  onRecorded?: (gap: RecordedGap) => void;
  /** Runs the key merge and the insert of one agent's gap as one unit (one transaction, one commit). */
  atomically?: <T>(agentId: string, work: () => Promise<T>) => Promise<T>;
}): GapRecorder {
  const { gaps, logger } = options;
  return async (event) => {
    try {
      const gapClass = classifyGap(event.reason, {
        ...(event.errorCode ? { errorCode: event.errorCode } : {}),
        ...(event.detail ? { detail: event.detail } : {}),
      });
      const store = async () => {
        const intentKey = (await options.canonicalKey?.(event.agentId, event.intentKey)) ?? event.intentKey;
        return { intentKey, id: await gaps.record({ ...event, intentKey, rawIntentKey: event.intentKey, gapClass }) };
      };
      const { intentKey, id } = options.atomically ? await options.atomically(event.agentId, store) : await store();
      logger.info(
        { traceId: event.traceId, agentId: event.agentId, gapId: id, reason: event.reason, gapClass, intentKey },
        "capability gap recorded",
      );
      options.onRecorded?.({ ...event, intentKey, rawIntentKey: event.intentKey, id, gapClass });
      return id;
    } catch (error) {
      logger.error({ err: error, traceId: event.traceId }, "could not record a capability gap");
      return undefined;
    }
  };
}
