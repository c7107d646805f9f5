/**
 * The replay guard of the Feishu webhook. Feishu stamps every event request with
 * `X-Lark-Request-Timestamp` (Unix seconds), and with an encrypt key the signature covers
 * it: a captured request replayed later keeps its old stamp, since a new one would need
 * the key to sign. A stamp more than 5 minutes away from now, past or future, is refused.
 * A request without the header is left to the signature check (the URL challenge may
 * come without one; a signed event never does).
 */

/** How far a request's timestamp may be from the bot's clock, either way. */
export const FEISHU_WEBHOOK_MAX_SKEW_MS = 5 * 60 * 1000;

/** Why the request's timestamp is refused, or undefined when it is fresh (or absent). */
export function staleTimestamp(header: string | string[] | undefined, now: number): string | undefined {
  if (header === undefined) return undefined;
  const value = String(header);
  if (!/^\d{1,12}$/.test(value))
    return `X-Lark-Request-Timestamp ${JSON.stringify(value.slice(0, 40))} is not a Unix time in seconds`;
  const skewMs = now - Number(value) * 1000;
  const limit = `more than ${FEISHU_WEBHOOK_MAX_SKEW_MS / 1000} s away from the bot's clock is refused as a replay`;
  if (skewMs > FEISHU_WEBHOOK_MAX_SKEW_MS)
    return `X-Lark-Request-Timestamp is ${Math.round(skewMs / 1000)} s old; a request ${limit}`;
  if (skewMs < -FEISHU_WEBHOOK_MAX_SKEW_MS)
    return `X-Lark-Request-Timestamp is ${Math.round(-skewMs / 1000)} s in the future; a request ${limit} (check this host's clock)`;
  return undefined;
}
