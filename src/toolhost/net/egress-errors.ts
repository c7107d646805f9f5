/**
 * How the egress proxy says no, and the errors our fetch turns that into. The wire forms
 * are the proxy's contract (docs/network.md): a refused host is `403` with
 * `X-Laoding-Refused: <reason>`, an allowed host that could not be reached is `502` with
 * `X-Laoding-Failed: <reason>`. The reasons are written for the model and name the host.
 */

/** Header (lower case, as node:http reports it) on the proxy's refusal. */
export const REFUSED_HEADER = "x-laoding-refused";
/** Header on the proxy's answer when an allowed host could not be reached. */
export const FAILED_HEADER = "x-laoding-failed";

/** The egress proxy refused the host: it is not on the agent's network allow list (or is one of the bot's own endpoints). */
export class EgressRefusedError extends Error {
  override readonly name = "EgressRefusedError";
  constructor(
    /** The proxy's reason, as the model should read it. */
    readonly reason: string,
    readonly url: string,
  ) {
    super(reason);
  }
}

/**
 * The host is allowed but could not be reached or answered badly: the proxy's 502
 * (DNS, connect), a TLS handshake that failed, a connection reset, or the proxy's own
 * socket gone.
 */
export class EgressFailedError extends Error {
  override readonly name = "EgressFailedError";
  constructor(
    readonly reason: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}
