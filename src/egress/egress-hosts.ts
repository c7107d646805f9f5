/**
 * The EGRESS_HOSTS file: names the egress proxy resolves from the operator's word instead
 * of DNS, in the hosts format (`<address> <name> [<name>...]`, `#` comments, blank lines).
 * A name mapped here is trusted to its addresses even when they are internal, so this is
 * how an allow list reaches a split-horizon host, and how tests name loopback servers.
 * Read once at start; a bad line stops start-up naming `file:line`.
 */
import { readFile } from "node:fs/promises";
import { HostNameError, normalizeHostName } from "./host-name.js";
import { AddressSyntaxError, formatIpAddress, parseIpAddress, unmapIpv4 } from "./ip-address.js";

/** Normalized name -> its addresses in file order (canonical text, IPv4-mapped written as IPv4). */
export type EgressHosts = ReadonlyMap<string, readonly string[]>;

const LINE_FORM = 'each line is "<address> <name> [<name>...]", with # for comments';
/** A hosts file is small; a bigger file is more likely a wrong path than a real list. */
const MAX_FILE_BYTES = 1024 * 1024;

export class EgressHostsError extends Error {
  override readonly name = "EgressHostsError";
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    problem: string,
  ) {
    super(`${line === undefined ? file : `${file}:${line}`}: ${problem}`);
  }
}

/** The mapping a hosts-format text holds; `origin` names the file in errors. */
export function parseEgressHosts(text: string, origin: string): EgressHosts {
  const hosts = new Map<string, string[]>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNumber = index + 1;
    const fail = (problem: string) => new EgressHostsError(origin, lineNumber, problem);
    const fields = (raw.split("#")[0] ?? "").trim().split(/\s+/).filter(Boolean);
    const [addressText, ...names] = fields;
    if (addressText === undefined) return;
    let address: string;
    try {
      address = formatIpAddress(unmapIpv4(parseIpAddress(addressText)));
    } catch (error) {
      if (!(error instanceof AddressSyntaxError)) throw error;
      throw fail(`"${addressText}" is not an IP address (${error.message}); ${LINE_FORM}`);
    }
    if (names.length === 0) throw fail(`the address ${addressText} has no names after it; ${LINE_FORM}`);
    for (const nameText of names) {
      if (nameText.includes("*"))
        throw fail(`"${nameText}": wildcards are not allowed here; list each name the agent uses`);
      let name: string;
      try {
        name = normalizeHostName(nameText);
      } catch (error) {
        if (!(error instanceof HostNameError)) throw error;
        throw fail(`"${nameText}" is not a host name: ${error.message}`);
      }
      const addresses = hosts.get(name) ?? [];
      if (!addresses.includes(address)) addresses.push(address);
      hosts.set(name, addresses);
    }
  });
  return hosts;
}

/** Reads and parses the file at `path`; errors name the file and say what to fix. */
export async function loadEgressHosts(path: string): Promise<EgressHosts> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_FILE_BYTES)
      throw new EgressHostsError(
        path,
        undefined,
        `the file is over ${MAX_FILE_BYTES} bytes; is EGRESS_HOSTS the right path?`,
      );
    text = bytes.toString("utf8");
  } catch (error) {
    if (error instanceof EgressHostsError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new EgressHostsError(
      path,
      undefined,
      `cannot read the EGRESS_HOSTS file (${code}); check the path and its permissions`,
    );
  }
  return parseEgressHosts(text, path);
}
