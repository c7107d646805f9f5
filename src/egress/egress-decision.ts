/**
 * May this agent reach host:port, and at which address? The whole egress policy in one
 * function, in this order:
 *  1. An IP literal must lie in an address entry (with the port); a loose spelling
 *     (`127.1`, `0x7f.1`, `2130706433`) or a zone id is refused as unreadable.
 *  2. A name must match a name entry (exact or `*.suffix`).
 *  3. The name is resolved: EGRESS_HOSTS first (trusted), else DNS (every address).
 *  4. Every DNS address that is internal must lie in an address entry (DNS rebinding).
 *  5. No address may be one of the bot's own endpoints on that port. A listener on
 *     loopback or the unspecified address is reached by any local spelling, so any
 *     loopback, unspecified or own-interface address counts as it. The model endpoint
 *     (`exemptWhenListedByName`) is exempt when the host matched a plain name entry.
 * The caller connects to the addresses returned, never to a fresh resolution.
 */
import { networkInterfaces } from "node:os";
import { type AllowList, addressAllowed, matchName } from "./allow-list.js";
import { internalAddressKind } from "./address-class.js";
import type { EgressHosts } from "./egress-hosts.js";
import { HostNameError, normalizeHostName } from "./host-name.js";
import {
  AddressSyntaxError,
  formatIpAddress,
  type IpAddress,
  parseIpAddress,
  sameAddress,
  tryParseIpAddress,
  unmapIpv4,
} from "./ip-address.js";

/** A listener of the bot's own that agents must not reach (admin, webhooks, the model endpoint). */
export type OwnEndpoint = {
  /** Shown in the refusal: "admin", "webhooks", "model endpoint". */
  readonly label: string;
  /** The address it listens on (or, for the model endpoint, an address its name resolves to). */
  readonly address: string;
  readonly port: number;
  /** The model endpoint: reachable when the requested host matched a plain (not wildcard) name entry. */
  readonly exemptWhenListedByName?: boolean;
  /** When set, the exemption applies only to requests for this name (the model endpoint's host). */
  readonly name?: string;
};

/** All addresses of a name, as `dns.lookup(name, { all: true })` gives them. */
export type EgressLookup = (name: string) => Promise<readonly string[]>;

export type EgressDecision =
  | {
      readonly allowed: true;
      /** The first address to try; `addresses` holds every checked one, in order. */
      readonly address: string;
      readonly addresses: readonly string[];
      readonly via: "hosts" | "dns" | "literal";
    }
  | {
      readonly allowed: false;
      /** "refused": the policy said no (403). "failed": allowed but unresolvable (502). */
      readonly outcome: "refused" | "failed";
      readonly reason: string;
      readonly address?: string;
    };

export type EgressRequest = {
  readonly allow: AllowList;
  /** As the client wrote it, without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
  readonly hosts: EgressHosts;
  readonly lookup: EgressLookup;
  readonly ownEndpoints: readonly OwnEndpoint[];
  /** This machine's interface addresses; default read from the system at each call. */
  readonly localAddresses?: readonly string[];
};

export const refusalReasons = {
  notListed: (host: string) => `${host} is not on this agent's network allow list`,
  internal: (host: string, address: string) =>
    `${host} resolves to ${address}, an internal address not on this agent's network allow list`,
  ownEndpoint: (host: string, port: number, label: string) =>
    `${host}:${port} is one of the bot's own endpoints (${label})`,
  unreadableHost: (host: string, problem: string) => `${host} is not a host this proxy accepts: ${problem}`,
};

export async function decideEgress(request: EgressRequest): Promise<EgressDecision> {
  const { allow, host, port } = request;
  const literal = readLiteral(host);
  if (literal instanceof Error) return refuse(refusalReasons.unreadableHost(host, literal.message));
  if (literal) {
    const shown = literal.family === 6 ? `[${host}]` : host;
    if (!addressAllowed(allow, literal, port)) return refuse(refusalReasons.notListed(shown));
    const hit = ownEndpointHit(request, [literal], undefined, undefined);
    if (hit) return refuse(refusalReasons.ownEndpoint(shown, port, hit.label), formatIpAddress(literal));
    const address = formatIpAddress(unmapIpv4(literal));
    return { allowed: true, address, addresses: [address], via: "literal" };
  }

  let name: string;
  try {
    name = normalizeHostName(host);
  } catch (error) {
    if (!(error instanceof HostNameError)) throw error;
    return refuse(refusalReasons.unreadableHost(host, error.message));
  }
  const match = matchName(allow, name, port);
  if (!match) return refuse(refusalReasons.notListed(name));

  const mapped = request.hosts.get(name);
  const via = mapped ? "hosts" : "dns";
  let texts: readonly string[];
  try {
    texts = mapped ?? (await request.lookup(name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { allowed: false, outcome: "failed", reason: `${name} could not be resolved (${code})` };
  }
  if (texts.length === 0)
    return { allowed: false, outcome: "failed", reason: `${name} could not be resolved (no addresses)` };

  const addresses: IpAddress[] = [];
  for (const text of texts) {
    const parsed = readResolved(text);
    if (!parsed) return refuse(refusalReasons.internal(name, text), text);
    // Names from EGRESS_HOSTS are the operator's word; DNS answers are checked (rebinding).
    const internal = via === "dns" && internalAddressKind(parsed) !== undefined;
    if (internal && !addressAllowed(allow, parsed, port))
      return refuse(refusalReasons.internal(name, formatIpAddress(parsed)), formatIpAddress(parsed));
    addresses.push(parsed);
  }
  const hit = ownEndpointHit(request, addresses, name, match);
  if (hit) return refuse(refusalReasons.ownEndpoint(name, port, hit.label));
  const canonical = [...new Set(addresses.map((address) => formatIpAddress(unmapIpv4(address))))];
  return { allowed: true, address: canonical[0] ?? "", addresses: canonical, via };
}

function refuse(reason: string, address?: string): EgressDecision {
  return { allowed: false, outcome: "refused", reason, ...(address === undefined ? {} : { address }) };
}

/**
 * The host as an address, undefined for a name, or the error of an IPv6 spelling that
 * does not parse. Only strict dotted decimal is an IPv4 literal; every other numeric
 * spelling goes on as a name and is refused there (host-name.ts: "ends in a number").
 */
function readLiteral(host: string): IpAddress | undefined | Error {
  if (!host.includes(":")) return tryParseIpAddress(host);
  try {
    return parseIpAddress(host);
  } catch (error) {
    if (error instanceof AddressSyntaxError) return error;
    throw error;
  }
}

/** A resolver's answer (zone ids dropped: they only ever decorate link-local addresses). */
function readResolved(text: string): IpAddress | undefined {
  try {
    return parseIpAddress(text.replace(/%.*$/, ""));
  } catch {
    return undefined;
  }
}

function ownEndpointHit(
  request: EgressRequest,
  targets: readonly IpAddress[],
  name: string | undefined,
  match: "exact" | "wildcard" | undefined,
): OwnEndpoint | undefined {
  // The interfaces are read only when an endpoint shares the port: most requests never need them.
  let local: IpAddress[] | undefined;
  const isLocal = (address: IpAddress) => {
    const kind = internalAddressKind(address);
    if (kind === "loopback" || kind === "unspecified") return true;
    local ??= (request.localAddresses ?? systemAddresses()).flatMap((text) => readResolved(text) ?? []);
    return local.some((own) => sameAddress(own, address));
  };
  for (const endpoint of request.ownEndpoints) {
    if (endpoint.port !== request.port) continue;
    if (endpoint.exemptWhenListedByName && match === "exact" && (!endpoint.name || sameName(endpoint.name, name)))
      continue;
    const bound = readResolved(endpoint.address);
    if (!bound) continue;
    const boundLocal = isLocal(unmapIpv4(bound));
    for (const target of targets.map(unmapIpv4))
      if (sameAddress(target, unmapIpv4(bound)) || (boundLocal && isLocal(target))) return endpoint;
  }
  return undefined;
}

function sameName(endpointName: string, name: string | undefined): boolean {
  try {
    return normalizeHostName(endpointName) === name;
  } catch {
    return false;
  }
}

/** How long this machine's interface addresses are reused: asking the kernel costs ~40 µs, a tenth of a proxied request's own work. */
const INTERFACES_TTL_MS = 5_000;
let interfaces: { addresses: string[]; until: number } | undefined;

function systemAddresses(): string[] {
  const now = performance.now();
  if (!interfaces || interfaces.until < now)
    interfaces = {
      addresses: Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address)),
      until: now + INTERFACES_TTL_MS,
    };
  return interfaces.addresses;
}
