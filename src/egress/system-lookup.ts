/**
 * How the proxy resolves a name by default: dns.lookup (getaddrinfo, so /etc/hosts and
 * the system's resolver order apply) for every address, bounded in time, since
 * getaddrinfo has no timeout of its own and a hung resolver must fail the request, not
 * hold it.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { EgressLookup } from "./egress-decision.js";

export async function systemLookup(name: string): Promise<readonly string[]> {
  const answers = await dnsLookup(name, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

/** `lookup` failing with code "timed out after N ms" when it takes longer than `timeoutMs`. */
export function withDeadline(lookup: EgressLookup, timeoutMs: number): EgressLookup {
  return (name) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(Object.assign(new Error("resolver timed out"), { code: `timed out after ${timeoutMs} ms` })),
        timeoutMs,
      );
      lookup(name).then(
        (addresses) => {
          clearTimeout(timer);
          resolve(addresses);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
}
