/**
 * What a request handler of the egress proxy gets from the agent's socket it arrived on:
 * the decision bound to that agent's allow list, the timeouts, and one `record` call per
 * connection that counts it and writes its log line.
 */
import type { Socket } from "node:net";
import type { EgressDecision } from "./egress-decision.js";
import type { RequestTarget } from "./request-target.js";

/** One proxied connection as it is logged: never headers or paths, which may hold secrets. */
export type ConnectionRecord = {
  readonly method: string;
  /** The host as the log and the reasons show it (IPv6 literals in brackets). */
  readonly host: string;
  readonly port: number;
  readonly address?: string;
  readonly via?: "hosts" | "dns" | "literal";
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Whether the allow list let it through; a destination that could not be reached is allowed and `failed`. */
  readonly allowed: boolean;
  readonly failed?: boolean;
  readonly reason?: string;
};

export type ProxyContext = {
  readonly agentId: string;
  decide(target: RequestTarget): Promise<EgressDecision>;
  readonly connectTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Called exactly once per connection, when it is refused, fails or closes. */
  record(connection: ConnectionRecord): void;
  /** A request the proxy could not read (answered 400). */
  rejectBadRequest(reason: string): void;
  /** Upstream sockets, so removing the agent can end them. */
  track(socket: Socket): void;
};

/** How a host appears in reasons and logs: IPv6 literals in brackets, names as written. */
export function shownHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host.toLowerCase().replace(/\.$/, "");
}
