/**
 * When a server that stopped may be started again: 1 s after the first failure, then
 * twice as long after each failure in a row, at most a minute; a server that ran
 * healthily for a minute starts its count afresh. Nothing waits on a timer: the next
 * use after the delay starts it (mcp-servers.ts), so a server nobody uses costs nothing.
 */
export type BackOffPolicy = {
  /** Delay after the first failure in a row. */
  baseMs: number;
  /** Longest delay. */
  maxMs: number;
  /** Running this long resets the count of failures in a row. */
  healthyMs: number;
};

export const DEFAULT_BACK_OFF: BackOffPolicy = { baseMs: 1_000, maxMs: 60_000, healthyMs: 60_000 };

/** The delay before the next start after `failuresInRow` failures (1 or more). */
export function backOffDelay(policy: BackOffPolicy, failuresInRow: number): number {
  const doublings = Math.min(Math.max(0, failuresInRow - 1), 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** doublings);
}
