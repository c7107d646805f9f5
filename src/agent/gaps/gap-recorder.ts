/** Records a capability gap with its class; recording never breaks a turn. */
import type { Logger } from "pino";
import type { GapsStore } from "../../store/gaps-store.js";
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

export type GapRecorder = (event: GapEvent) => number | undefined;

export function createGapRecorder(gaps: GapsStore, logger: Logger, onRecorded?: (event: GapEvent & { id: number }) => void): GapRecorder {
  return (event) => {
    try {
      const gapClass = classifyGap(event.reason, { ...(event.errorCode ? { errorCode: event.errorCode } : {}), ...(event.detail ? { detail: event.detail } : {}) });
      const id = gaps.record({ ...event, gapClass });
      logger.info({ traceId: event.traceId, agentId: event.agentId, gapId: id, reason: event.reason, gapClass, intentKey: event.intentKey }, "capability gap recorded");
      onRecorded?.({ ...event, id });
      return id;
    } catch (error) {
      logger.error({ err: error, traceId: event.traceId }, "could not record a capability gap");
      return undefined;
    }
  };
}
