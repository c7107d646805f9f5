/**
 * An agent's network allow list (agents.json `"network": { "allow": [...] }`), parsed once
 * at start into typed entries, and the two questions the egress proxy asks of it.
 *
 * Entry forms: a host name (`api.github.com`), a wildcard for a name's subdomains at any
 * depth but not the name itself (`*.corp.example`), an IP address or CIDR range
 * (`10.2.0.0/16`, `fd00::/8`; a bare address is /32 or /128), each optionally with `:port`
 * (`allowed.test:8080`, `10.2.0.0/16:443`, and for IPv6 in brackets `[fd00::/8]:443`).
 * An IPv4-mapped IPv6 entry (`::ffff:10.0.0.0/104`) is kept as the IPv4 range it means,
 * because a connection to a mapped address reaches that IPv4 address.
 */
import { HostNameError, normalizeHostName } from "./host-name.js";
import {
  AddressSyntaxError,
  addressBits,
  formatIpAddress,
  type IpAddress,
  inNetwork,
  parseIpAddress,
  parseIpv4,
  parseIpv6,
  tryParseIpAddress,
  unmapIpv4,
} from "./ip-address.js";

export type NameEntry = {
  readonly kind: "name";
  /** The entry as written, for messages. */
  readonly text: string;
  /** The name, or for a wildcard the suffix after `*.`. */
  readonly name: string;
  readonly wildcard: boolean;
  readonly port?: number;
};

export type AddressEntry = {
  readonly kind: "address";
  readonly text: string;
  readonly network: IpAddress;
  readonly prefixLength: number;
  readonly port?: number;
};

export type AllowEntry = NameEntry | AddressEntry;
export type AllowList = readonly AllowEntry[];

const VALID_FORMS =
  "Valid forms: a host name (api.github.com), a wildcard for its subdomains (*.corp.example), " +
  "an IP address or CIDR range (10.2.0.0/16, fd00::/8), each optionally with :port " +
  "(api.github.com:443, 10.2.0.0/16:443, [fd00::/8]:443)";

/** A bad entry: the message names it, says what is wrong and lists the valid forms. */
export class AllowEntryError extends Error {
  override readonly name = "AllowEntryError";
  constructor(
    readonly entry: string,
    readonly problem: string,
  ) {
    super(
      `"${entry}" is not a valid network allow entry: ${problem}${/[.?!]$/.test(problem) ? "" : "."} ${VALID_FORMS}`,
    );
  }
}

/** One entry, or throws AllowEntryError. */
export function parseAllowEntry(text: string): AllowEntry {
  try {
    return parseEntry(text);
  } catch (error) {
    if (error instanceof AddressSyntaxError || error instanceof HostNameError)
      throw new AllowEntryError(text, error.message);
    throw error;
  }
}

/** Every entry of a list read from JSON, or throws AllowEntryError for the first bad one. */
export function parseAllowList(entries: readonly unknown[]): AllowList {
  return entries.map((entry, index) => {
    if (typeof entry !== "string")
      throw new AllowEntryError(JSON.stringify(entry) ?? String(entry), `entry ${index} is not a string`);
    return parseAllowEntry(entry);
  });
}

function parseEntry(text: string): AllowEntry {
  if (text.trim() === "") throw new AllowEntryError(text, "it is empty");
  if (text !== text.trim()) throw new AllowEntryError(text, "it has spaces around it");
  if (text.startsWith("[")) {
    const match = /^\[([^\]]*)\](?::(.*))?$/.exec(text);
    if (!match?.[1]) throw new AllowEntryError(text, "a bracketed IPv6 entry is [address] or [address/prefix]:port");
    if (!match[1].includes(":")) throw new AllowEntryError(text, "brackets are only for IPv6 addresses");
    const port = match[2] === undefined ? undefined : parsePort(text, match[2]);
    return addressEntry(text, match[1], 6, port);
  }
  const colons = text.split(":").length - 1;
  // Two or more colons: an IPv6 address or range, which takes a port only in brackets.
  if (colons > 1) return addressEntry(text, text, 6, undefined);
  const [host = "", portText] = text.split(":");
  const port = portText === undefined ? undefined : parsePort(text, portText);
  if (host.includes("/") || tryParseIpAddress(host)) return addressEntry(text, host, 4, port);
  if (host.startsWith("*.")) {
    const name = normalizeHostName(host.slice(2));
    return { kind: "name", text, name, wildcard: true, ...(port === undefined ? {} : { port }) };
  }
  if (host.includes("*"))
    throw new AllowEntryError(text, 'a wildcard is written "*.suffix" and matches only the subdomains of suffix');
  return {
    kind: "name",
    text,
    name: normalizeHostName(host),
    wildcard: false,
    ...(port === undefined ? {} : { port }),
  };
}

function addressEntry(text: string, spec: string, family: 4 | 6, port: number | undefined): AddressEntry {
  const [addressText = "", prefixText, extra] = spec.split("/");
  if (extra !== undefined) throw new AllowEntryError(text, 'a range has one "/"');
  const address = family === 4 ? parseIpv4(addressText) : parseIpv6(addressText);
  const bits = addressBits(family);
  let prefixLength = bits;
  if (prefixText !== undefined) {
    if (!/^(?:0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > bits)
      throw new AllowEntryError(text, `the prefix length after "/" is a number 0-${bits} for IPv${family}`);
    prefixLength = Number(prefixText);
  }
  const hostBits = address.value & ((1n << BigInt(bits - prefixLength)) - 1n);
  if (hostBits !== 0n) {
    const network = { family, value: address.value - hostBits };
    throw new AllowEntryError(
      text,
      `the address has bits set beyond the /${prefixLength} prefix; did you mean ${formatIpAddress(network)}/${prefixLength}?`,
    );
  }
  const mapped = family === 6 && prefixLength >= 96 && address.value >> 32n === 0xffffn;
  const network = mapped ? unmapIpv4(address) : address;
  return {
    kind: "address",
    text,
    network,
    prefixLength: mapped ? prefixLength - 96 : prefixLength,
    ...(port === undefined ? {} : { port }),
  };
}

function parsePort(text: string, portText: string): number {
  if (!/^[1-9][0-9]{0,4}$/.test(portText) || Number(portText) > 65_535)
    throw new AllowEntryError(text, 'the port after the last ":" is a number 1-65535');
  return Number(portText);
}

function portMatches(entry: AllowEntry, port: number): boolean {
  return entry.port === undefined || entry.port === port;
}

/**
 * How a host name matches the list on a port: "exact" when a plain name entry matches
 * (the only match that may reach the model endpoint), "wildcard" when only a `*.suffix`
 * entry does, undefined when none does. `host` is normalized first; a host that is not a
 * valid name matches nothing.
 */
export function matchName(list: AllowList, host: string, port: number): "exact" | "wildcard" | undefined {
  let name: string;
  try {
    name = normalizeHostName(host);
  } catch {
    return undefined;
  }
  let found: "wildcard" | undefined;
  for (const entry of list) {
    if (entry.kind !== "name" || !portMatches(entry, port)) continue;
    if (!entry.wildcard && entry.name === name) return "exact";
    if (entry.wildcard && name.endsWith(`.${entry.name}`)) found = "wildcard";
  }
  return found;
}

export function nameAllowed(list: AllowList, host: string, port: number): boolean {
  return matchName(list, host, port) !== undefined;
}

/**
 * Whether an address lies in an address entry that admits the port. IPv4-mapped IPv6
 * addresses are compared as the IPv4 address they reach. A string that is not a strict
 * address spelling is never allowed.
 */
export function addressAllowed(list: AllowList, address: string | IpAddress, port: number): boolean {
  let parsed: IpAddress;
  try {
    parsed = unmapIpv4(typeof address === "string" ? parseIpAddress(address) : address);
  } catch {
    return false;
  }
  return list.some(
    (entry) =>
      entry.kind === "address" && portMatches(entry, port) && inNetwork(parsed, entry.network, entry.prefixLength),
  );
}
