/**
 * Operators hear of environment problems (the model down, rate limited, the tool host or
 * sandbox gone) at most once per hour per agent and cause: one warn-level log line with
 * how many gaps of that cause the last hour saw, pointing at `laoding gaps`. The bot has
 * no way to message operators unasked, so the log (`laoding logs`) is where they hear it;
 * `/capability_gaps` shows the same problems on demand. The hour is counted per process.
 */
import type { Logger } from "pino";
import type { EnvironmentCause } from "../../store/gap-causes.js";
import { gapCauseWords } from "./classify-gap.js";

export const ENVIRONMENT_NOTICE_INTERVAL_MS = 3_600_000;

/** Called for every environment gap recorded; resolves once the notice (if one was due) is out; never rejects. */
export type EnvironmentNotice = (agentId: string, cause: EnvironmentCause) => Promise<void>;

export function createEnvironmentNotice(options: {
  logger: Logger;
  clock: { now(): number };
  /** Environment gaps of the cause since a time (the store's count, so every replica's rows count). */
  countSince: (agentId: string, cause: EnvironmentCause, sinceMs: number) => Promise<number>;
  intervalMs?: number;
}): EnvironmentNotice {
  const interval = options.intervalMs ?? ENVIRONMENT_NOTICE_INTERVAL_MS;
  const lastNotice = new Map<string, number>();
  return async (agentId, cause) => {
    const now = options.clock.now();
    const key = `${agentId}\u0000${cause}`;
    const previous = lastNotice.get(key);
    if (previous !== undefined && now - previous < interval) return;
    // Taken before the count is awaited: two gaps at once give one notice.
    lastNotice.set(key, now);
    try {
      const count = Math.max(1, await options.countSince(agentId, cause, now - interval));
      const hours = interval / 3_600_000;
      const window = hours === 1 ? "the last hour" : `the last ${hours} h`;
      // Logs are English: an operator's words, whatever the chat's BOT_LOCALE.
      const message = `environment problem: ${gapCauseWords("en", cause)} — ${count} in ${window}; see laoding gaps --agent ${agentId}`;
      options.logger.warn({ agentId, cause, count, windowMs: interval }, message);
    } catch (error) {
      options.logger.warn(
        { err: error, agentId, cause },
        "could not count the environment gaps for the operators' notice",
      );
    }
  };
}
