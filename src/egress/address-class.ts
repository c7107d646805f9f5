/**
 * Which addresses count as internal for the egress proxy: every range IANA's special
 * purpose registries mark as not globally reachable (loopback, RFC 1918 private,
 * link-local, carrier-grade NAT, unspecified, multicast, documentation, benchmarking,
 * reserved, IPv6 unique local ...), and for IPv6 everything outside 2000::/3, the only
 * block allocated for global unicast.
 *
 * IPv6 forms that carry an IPv4 address are judged by that address: IPv4-mapped
 * (::ffff:127.0.0.1, however it is spelled), IPv4-compatible (::127.0.0.1), SIIT
 * (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d, which a NAT64 gateway turns into a.b.c.d)
 * and 6to4 (2002:AABB:CCDD::). Fail closed: a text that is not an address at all is
 * reported as internal ("unrecognized address"), so a resolver's surprise is refused.
 */
import { type IpAddress, inNetwork, parseIpAddress } from "./ip-address.js";

type Range = { network: string; prefixLength: number; kind: string };

const IPV4_RANGES: readonly Range[] = [
  { network: "0.0.0.0", prefixLength: 8, kind: "unspecified" },
  { network: "10.0.0.0", prefixLength: 8, kind: "private" },
  { network: "100.64.0.0", prefixLength: 10, kind: "carrier-grade NAT" },
  { network: "127.0.0.0", prefixLength: 8, kind: "loopback" },
  { network: "169.254.0.0", prefixLength: 16, kind: "link-local" },
  { network: "172.16.0.0", prefixLength: 12, kind: "private" },
  { network: "192.0.0.0", prefixLength: 24, kind: "IETF protocol assignments" },
  { network: "192.0.2.0", prefixLength: 24, kind: "documentation" },
  { network: "192.168.0.0", prefixLength: 16, kind: "private" },
  { network: "198.18.0.0", prefixLength: 15, kind: "benchmarking" },
  { network: "198.51.100.0", prefixLength: 24, kind: "documentation" },
  { network: "203.0.113.0", prefixLength: 24, kind: "documentation" },
  { network: "224.0.0.0", prefixLength: 4, kind: "multicast" },
  { network: "255.255.255.255", prefixLength: 32, kind: "broadcast" },
  { network: "240.0.0.0", prefixLength: 4, kind: "reserved" },
];

const IPV6_RANGES: readonly Range[] = [
  { network: "::", prefixLength: 128, kind: "unspecified" },
  { network: "::1", prefixLength: 128, kind: "loopback" },
  { network: "64:ff9b:1::", prefixLength: 48, kind: "NAT64 local-use" },
  { network: "100::", prefixLength: 64, kind: "discard-only" },
  { network: "2001::", prefixLength: 23, kind: "IETF protocol assignments" },
  { network: "2001:db8::", prefixLength: 32, kind: "documentation" },
  { network: "3fff::", prefixLength: 20, kind: "documentation" },
  { network: "fc00::", prefixLength: 7, kind: "unique local" },
  { network: "fe80::", prefixLength: 10, kind: "link-local" },
  { network: "fec0::", prefixLength: 10, kind: "site-local" },
  { network: "ff00::", prefixLength: 8, kind: "multicast" },
];

/** IPv6 prefixes whose addresses embed an IPv4 address, and where it sits (bits from the right). */
const EMBEDDING: readonly (Range & { shift: bigint })[] = [
  { network: "::ffff:0:0", prefixLength: 96, kind: "IPv4-mapped", shift: 0n },
  { network: "::ffff:0:0:0", prefixLength: 96, kind: "IPv4-translated", shift: 0n },
  { network: "64:ff9b::", prefixLength: 96, kind: "NAT64", shift: 0n },
  { network: "2002::", prefixLength: 16, kind: "6to4", shift: 80n },
  { network: "::", prefixLength: 96, kind: "IPv4-compatible", shift: 0n },
];

const GLOBAL_UNICAST = { network: parseIpAddress("2000::"), prefixLength: 3 };

const compiled = (ranges: readonly Range[]) =>
  ranges.map((range) => ({ ...range, address: parseIpAddress(range.network) }));
const IPV4 = compiled(IPV4_RANGES);
const IPV6 = compiled(IPV6_RANGES);
const EMBEDDED = EMBEDDING.map((range) => ({ ...range, address: parseIpAddress(range.network) }));

/**
 * Undefined for a public address, else what kind of internal address it is. Accepts an
 * address or its text as Node's net and dns modules print it (zone ids like `%eth0` and
 * upper-case hex included).
 */
export function internalAddressKind(address: string | IpAddress): string | undefined {
  let parsed: IpAddress;
  try {
    parsed = typeof address === "string" ? parseIpAddress(address.replace(/%.*$/, "")) : address;
  } catch {
    return "unrecognized address";
  }
  return parsed.family === 4 ? ipv4Kind(parsed) : ipv6Kind(parsed);
}

function ipv4Kind(address: IpAddress): string | undefined {
  return IPV4.find((range) => inNetwork(address, range.address, range.prefixLength))?.kind;
}

function ipv6Kind(address: IpAddress): string | undefined {
  const direct = IPV6.find((range) => inNetwork(address, range.address, range.prefixLength));
  if (direct) return direct.kind;
  const embedding = EMBEDDED.find((range) => inNetwork(address, range.address, range.prefixLength));
  if (embedding) {
    const inner = ipv4Kind({ family: 4, value: (address.value >> embedding.shift) & 0xffffffffn });
    if (inner) return inner;
    // A mapped address is the IPv4 address itself, and NAT64 or 6to4 reach it through a
    // gateway: public when it is. The other embeddings are not routed anywhere.
    return embedding.kind === "IPv4-compatible" || embedding.kind === "IPv4-translated" ? "reserved" : undefined;
  }
  if (!inNetwork(address, GLOBAL_UNICAST.network, GLOBAL_UNICAST.prefixLength)) return "reserved";
  return undefined;
}
