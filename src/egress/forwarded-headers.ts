/**
 * Which headers cross the proxy. Hop-by-hop headers describe one connection, not the
 * message (RFC 9110 7.6.1): Connection and every header it names, Keep-Alive, TE,
 * Trailer, Transfer-Encoding, Upgrade, and all Proxy-* headers (Proxy-Authorization is
 * for us, never for the origin). Expect is answered by the proxy itself. Values are kept
 * as raw pairs so repeated headers (Set-Cookie) and their case survive.
 */

const HOP_BY_HOP = new Set(["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "expect"]);

/** Raw [name, value, name, value, ...] pairs without hop-by-hop headers and without `drop`. */
export function endToEndHeaders(rawHeaders: readonly string[], drop: readonly string[] = []): string[] {
  const named = new Set(drop.map((name) => name.toLowerCase()));
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    if (rawHeaders[index]?.toLowerCase() === "connection")
      for (const token of (rawHeaders[index + 1] ?? "").split(","))
        if (token.trim() !== "") named.add(token.trim().toLowerCase());
  const kept: string[] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] ?? "";
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith("proxy-") || named.has(lower)) continue;
    kept.push(name, rawHeaders[index + 1] ?? "");
  }
  return kept;
}
