/** The holdout: a deterministic share of eligible tasks, by a hash of the task's trace id, is shown nothing. */
import { createHash } from "node:crypto";

export const DEFAULT_HOLDOUT_PERCENT = 10;

export function isHoldout(traceId: string, percent: number): boolean {
  const bucket = createHash("sha256").update(traceId).digest().readUInt32BE(0) % 100;
  return bucket < percent;
}
