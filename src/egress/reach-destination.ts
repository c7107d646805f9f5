/**
 * The part every proxy request shares, whatever its wire form: decide, then connect to a
 * checked address. Refusals and failures are recorded here (once); the handler only
 * sends the answer in its own form (a raw socket for CONNECT, a response for plain HTTP).
 */
import type { Socket } from "node:net";
import { type ConnectionRecord, type ProxyContext, shownHost } from "./proxy-context.js";
import type { ProblemKind } from "./proxy-responses.js";
import type { RequestTarget } from "./request-target.js";
import { connectUpstream, UpstreamConnectError } from "./upstream-connect.js";

export type Reached =
  | { readonly ok: true; readonly upstream: Socket; readonly checked: ConnectionRecord }
  /** `problem` is what to answer; undefined when the client went away and nobody is listening. */
  | { readonly ok: false; readonly problem?: { readonly kind: ProblemKind; readonly reason: string } };

const CLIENT_GONE = "the client went away before the connection was made";

export async function reachDestination(
  context: ProxyContext,
  method: string,
  target: RequestTarget,
  clientGone: AbortSignal,
): Promise<Reached> {
  const host = shownHost(target.host);
  const base = { method, host, port: target.port, bytesUp: 0, bytesDown: 0 };
  const decision = await context.decide(target);
  if (!decision.allowed) {
    const failed = decision.outcome === "failed";
    context.record({
      ...base,
      ...(decision.address ? { address: decision.address } : {}),
      allowed: failed,
      ...(failed ? { failed } : {}),
      reason: decision.reason,
    });
    return { ok: false, problem: { kind: decision.outcome, reason: decision.reason } };
  }
  const checked = { ...base, address: decision.address, via: decision.via, allowed: true };
  try {
    const upstream = await connectUpstream({
      addresses: decision.addresses,
      port: target.port,
      timeoutMs: context.connectTimeoutMs,
      signal: clientGone,
    });
    context.track(upstream);
    if (!clientGone.aborted) return { ok: true, upstream, checked };
    upstream.destroy();
  } catch (error) {
    if (!(error instanceof UpstreamConnectError)) throw error;
    if (!clientGone.aborted) {
      const reason = `could not connect to ${host}:${target.port} (${error.message})`;
      context.record({ ...checked, failed: true, reason });
      return { ok: false, problem: { kind: "failed", reason } };
    }
  }
  context.record({ ...checked, reason: CLIENT_GONE });
  return { ok: false };
}
