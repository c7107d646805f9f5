/** The deepest cause's words ("connect ECONNREFUSED 127.0.0.1:9"), not every wrapper's "Connection error." again. */
export function rootCause(error: unknown): string {
  let deepest: unknown = error;
  for (let depth = 0; depth < 5 && deepest instanceof Error && deepest.cause instanceof Error; depth += 1)
    deepest = deepest.cause;
  if (!(deepest instanceof Error)) return String(deepest);
  const last = deepest as Error & { code?: string };
  const text = last.message || last.code || "no detail";
  return last.code && !text.includes(last.code) ? `${last.code}: ${text}` : text;
}
