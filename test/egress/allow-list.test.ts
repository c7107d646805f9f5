import { describe, expect, it } from "vitest";
import {
  AllowEntryError,
  addressAllowed,
  matchName,
  nameAllowed,
  parseAllowEntry,
  parseAllowList,
} from "../../src/egress/allow-list.js";

const problem = (entry: string) => {
  try {
    parseAllowEntry(entry);
  } catch (error) {
    expect(error).toBeInstanceOf(AllowEntryError);
    return (error as Error).message;
  }
  throw new Error(`${entry} was accepted`);
};

describe("parseAllowEntry", () => {
  it("reads names, wildcards, addresses and ranges, each with an optional port", () => {
    expect(parseAllowEntry("API.GitHub.com.")).toMatchObject({ kind: "name", name: "api.github.com", wildcard: false });
    expect(parseAllowEntry("*.corp.example")).toMatchObject({ kind: "name", name: "corp.example", wildcard: true });
    expect(parseAllowEntry("allowed.test:8080")).toMatchObject({ kind: "name", name: "allowed.test", port: 8080 });
    expect(parseAllowEntry("xn--bcher-kva.example")).toMatchObject({ name: "xn--bcher-kva.example" });
    expect(parseAllowEntry("10.2.0.0/16:443")).toMatchObject({ kind: "address", prefixLength: 16, port: 443 });
    expect(parseAllowEntry("127.0.0.1")).toMatchObject({ kind: "address", prefixLength: 32 });
    expect(parseAllowEntry("fd00::/8")).toMatchObject({ kind: "address", prefixLength: 8 });
    expect(parseAllowEntry("fd00::1")).toMatchObject({ kind: "address", prefixLength: 128 });
    expect(parseAllowEntry("[fd00::/8]:443")).toMatchObject({ kind: "address", prefixLength: 8, port: 443 });
    expect(parseAllowEntry("[::1]:8080")).toMatchObject({ kind: "address", prefixLength: 128, port: 8080 });
    // An IPv4-mapped range means the IPv4 range.
    expect(parseAllowEntry("::ffff:10.0.0.0/104")).toMatchObject({ network: { family: 4 }, prefixLength: 8 });
  });

  it("names the entry, what is wrong and the valid forms", () => {
    const message = problem("10.2.0.0/33");
    expect(message).toContain('"10.2.0.0/33"');
    expect(message).toContain("0-32");
    expect(message).toContain("Valid forms:");
    expect(message).toContain("[fd00::/8]:443");
    expect(problem("10.2.3.4/16")).toContain("did you mean 10.2.0.0/16?");
    expect(problem("fd00::1/8")).toContain("did you mean fd00::/8?");
    expect(problem("*")).toContain("*.suffix");
    expect(problem("a.*.example")).toContain("*.suffix");
    expect(problem("bücher.example")).toContain("punycode");
    expect(problem("api.github.com:0")).toContain("1-65535");
    expect(problem("api.github.com:70000")).toContain("1-65535");
    expect(problem("-bad.example")).toContain('"-bad"');
    expect(problem("a..b")).toContain("empty labels");
    expect(problem("fe80::1%eth0")).toContain("zone ids");
    expect(problem("[10.0.0.1]:443")).toContain("only for IPv6");
    expect(problem(" api.github.com")).toContain("spaces");
    expect(problem("")).toContain("empty");
    expect(problem("https://api.github.com")).toContain("Valid forms");
  });

  it("refuses loose numeric spellings rather than guessing what they mean", () => {
    for (const loose of ["127.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.0.0.01", "1.2.3.4.5", "127.1:80"])
      expect(problem(loose), loose).toMatch(/four decimal numbers/);
  });

  it("parseAllowList names a non-string entry", () => {
    expect(() => parseAllowList(["api.github.com", 42])).toThrow(/entry 1 is not a string/);
    expect(parseAllowList(["a.example", "10.0.0.0/8"])).toHaveLength(2);
  });
});

describe("matching", () => {
  const list = parseAllowList([
    "api.github.com",
    "*.corp.example",
    "allowed.test:8080",
    "10.2.0.0/16:443",
    "[fd00::/8]:443",
    "127.0.0.1",
  ]);

  it("matches names exactly or as subdomains of a wildcard, at any depth, never the suffix itself", () => {
    expect(matchName(list, "api.github.com", 443)).toBe("exact");
    expect(matchName(list, "API.GITHUB.COM.", 443)).toBe("exact");
    expect(matchName(list, "github.com", 443)).toBeUndefined();
    expect(matchName(list, "evilapi.github.com", 443)).toBeUndefined();
    expect(matchName(list, "wiki.corp.example", 443)).toBe("wildcard");
    expect(matchName(list, "a.b.corp.example", 80)).toBe("wildcard");
    expect(matchName(list, "corp.example", 443)).toBeUndefined();
    expect(matchName(list, "evilcorp.example", 443)).toBeUndefined();
    expect(nameAllowed(list, "not a name", 443)).toBe(false);
  });

  it("restricts to the port an entry names", () => {
    expect(nameAllowed(list, "allowed.test", 8080)).toBe(true);
    expect(nameAllowed(list, "allowed.test", 80)).toBe(false);
    expect(addressAllowed(list, "10.2.3.4", 443)).toBe(true);
    expect(addressAllowed(list, "10.2.3.4", 80)).toBe(false);
    expect(addressAllowed(list, "fd12::1", 443)).toBe(true);
    expect(addressAllowed(list, "fd12::1", 80)).toBe(false);
    expect(addressAllowed(list, "127.0.0.1", 1)).toBe(true);
  });

  it("compares IPv4-mapped addresses as IPv4 and never matches loose spellings", () => {
    expect(addressAllowed(list, "::ffff:127.0.0.1", 80)).toBe(true);
    expect(addressAllowed(list, "::ffff:7f00:1", 80)).toBe(true);
    expect(addressAllowed(list, "127.0.0.2", 80)).toBe(false);
    expect(addressAllowed(list, "127.1", 80)).toBe(false);
    expect(addressAllowed(list, "2130706433", 80)).toBe(false);
    expect(addressAllowed(list, "10.3.0.1", 443)).toBe(false);
  });
});
