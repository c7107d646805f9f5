/**
 * Provider failures, mapped once from HTTP in the adapter. Callers decide on the class
 * (retry, tell the user, record an environment gap), never on message text.
 */
export const MODEL_ERROR_KINDS = [
  "rate_limit",
  "server",
  "connection",
  "timeout",
  "auth",
  "bad_request",
  "bad_response",
] as const;
export type ModelErrorKind = (typeof MODEL_ERROR_KINDS)[number];

/** For a kind that travelled as plain data (a retry notice, a stored gap's error code). */
export function isModelErrorKind(value: unknown): value is ModelErrorKind {
  return (MODEL_ERROR_KINDS as readonly unknown[]).includes(value);
}

export class ModelError extends Error {
  override readonly name: string = "ModelError";
  /** How long the server asked us to wait (Retry-After), when it said. */
  readonly retryAfterMs: number | undefined;
  /** Detail for the log only, never shown in a chat (a malformed SSE line's first 200 characters, redacted). */
  readonly logDetail: string | undefined;
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
    options: { cause?: unknown; retryAfterMs?: number; logDetail?: string } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
    this.logDetail = options.logDetail;
  }

  /** Failures of the provider or the network, not of the request: worth retrying later. */
  get transient(): boolean {
    return (
      this.kind === "rate_limit" || this.kind === "server" || this.kind === "connection" || this.kind === "timeout"
    );
  }
}
