/**
 * IP address literals as the egress proxy reads them: strict spellings only. An address
 * is a family and a number (bigint), so CIDR tests and class checks are one shift each.
 *
 * Why strict: the C resolver (inet_aton, which getaddrinfo and curl use) reads `127.1`,
 * `0x7f.0.0.1`, `0177.0.0.1` and `2130706433` all as 127.0.0.1, while other parsers read
 * some of them as names or as different numbers. A spelling two parsers disagree on is a
 * way around an allow list, so only dotted decimal without leading zeros is an IPv4
 * address, and a host that merely looks numeric is refused as ambiguous (see
 * `looksLikeLooseIpv4`). IPv6 zone ids (`fe80::1%eth0`) name an interface of this machine,
 * which means nothing to a forward proxy, so they are refused too.
 */

import { isIP } from "node:net";

export type IpAddress = { readonly family: 4 | 6; readonly value: bigint };

const IPV4_OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const IPV6_GROUP = /^[0-9a-f]{1,4}$/i;

/** Thrown for a spelling that is not a strict address; the message says what is wrong, without the text itself. */
export class AddressSyntaxError extends Error {
  override readonly name = "AddressSyntaxError";
}

/** Four dotted decimal numbers 0-255 without leading zeros, or throws. */
export function parseIpv4(text: string): IpAddress {
  const parts = text.split(".");
  if (parts.length !== 4) throw new AddressSyntaxError("an IPv4 address has four dotted decimal numbers");
  let value = 0n;
  for (const part of parts) {
    if (!IPV4_OCTET.test(part))
      throw new AddressSyntaxError(
        part.length > 1 && part.startsWith("0")
          ? "leading zeros are read as octal by some resolvers; write plain decimal numbers"
          : "each part of an IPv4 address is a decimal number 0-255",
      );
    const octet = Number(part);
    if (octet > 255) throw new AddressSyntaxError("each part of an IPv4 address is a decimal number 0-255");
    value = (value << 8n) | BigInt(octet);
  }
  return { family: 4, value };
}

/** An IPv6 address (`::` shorthand and a dotted IPv4 tail allowed, no zone id), or throws. */
export function parseIpv6(text: string): IpAddress {
  if (text.includes("%")) throw new AddressSyntaxError("IPv6 zone ids (%eth0) are not accepted");
  const halves = text.split("::");
  if (halves.length > 2) throw new AddressSyntaxError('an IPv6 address has at most one "::"');
  // A dotted IPv4 tail may only end the whole address.
  const groupsOf = (half: string | undefined, endsAddress: boolean): number[] => {
    if (half === undefined || half === "") return [];
    const pieces = half.split(":");
    const groups: number[] = [];
    pieces.forEach((piece, index) => {
      if (endsAddress && index === pieces.length - 1 && piece.includes(".")) {
        const tail = parseIpv4(piece).value;
        groups.push(Number(tail >> 16n), Number(tail & 0xffffn));
        return;
      }
      if (!IPV6_GROUP.test(piece)) throw new AddressSyntaxError("each IPv6 group is one to four hex digits");
      groups.push(Number.parseInt(piece, 16));
    });
    return groups;
  };
  const head = groupsOf(halves[0], halves.length === 1);
  const tail = groupsOf(halves[1], true);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1)
    throw new AddressSyntaxError("an IPv6 address has eight groups (or fewer with one ::)");
  const groups = [...head, ...Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(group);
  return { family: 6, value };
}

/** Either family by its shape (a colon means IPv6), or throws. */
export function parseIpAddress(text: string): IpAddress {
  return text.includes(":") ? parseIpv6(text) : parseIpv4(text);
}

/** The address, or undefined when the text is not a strict spelling of one. */
export function tryParseIpAddress(text: string): IpAddress | undefined {
  // Most hosts are names: Node's isIP says so without building and throwing an error (~30 µs each).
  if (isIP(text.replace(/%.*$/, "")) === 0 && !text.includes(":")) return undefined;
  try {
    return parseIpAddress(text);
  } catch {
    return undefined;
  }
}

/**
 * A host the C resolver would read as an IPv4 number although it is not strict dotted
 * decimal: its last label is all digits or 0x-hex (the WHATWG URL rule for "ends in a
 * number"). No real top-level domain is numeric, so nothing legitimate is lost.
 */
export function looksLikeLooseIpv4(host: string): boolean {
  const labels = host.replace(/\.$/, "").split(".");
  const last = labels[labels.length - 1] ?? "";
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** `::ffff:a.b.c.d` as the IPv4 address it reaches; any other address unchanged. */
export function unmapIpv4(address: IpAddress): IpAddress {
  if (address.family === 6 && address.value >> 32n === 0xffffn)
    return { family: 4, value: address.value & 0xffffffffn };
  return address;
}

/** The IPv4-mapped IPv6 form of an IPv4 address. */
export function mapToIpv6(address: IpAddress): IpAddress {
  return address.family === 4 ? { family: 6, value: MAPPED_PREFIX | address.value } : address;
}

export function addressBits(family: 4 | 6): number {
  return family === 4 ? 32 : 128;
}

/** Whether `address` lies in `network/prefixLength` (same family only). */
export function inNetwork(address: IpAddress, network: IpAddress, prefixLength: number): boolean {
  if (address.family !== network.family) return false;
  const shift = BigInt(addressBits(address.family) - prefixLength);
  return address.value >> shift === network.value >> shift;
}

/** Canonical text: dotted decimal, or RFC 5952 IPv6 (lower case, longest zero run as ::). */
export function formatIpAddress(address: IpAddress): string {
  if (address.family === 4)
    return [24n, 16n, 8n, 0n].map((shift) => String((address.value >> shift) & 0xffn)).join(".");
  const groups = Array.from({ length: 8 }, (_, index) => Number((address.value >> BigInt(112 - index * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; start += 1) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length += 1;
    if (length > bestLength) [bestStart, bestLength] = [start, length];
  }
  if (address.value >> 32n === 0xffffn)
    return `::ffff:${formatIpAddress({ family: 4, value: address.value & 0xffffffffn })}`;
  const hex = (list: number[]) => list.map((group) => group.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

export function sameAddress(left: IpAddress, right: IpAddress): boolean {
  return left.family === right.family && left.value === right.value;
}
