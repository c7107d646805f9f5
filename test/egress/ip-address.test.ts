import { describe, expect, it } from "vitest";
import {
  formatIpAddress,
  inNetwork,
  looksLikeLooseIpv4,
  parseIpAddress,
  parseIpv4,
  tryParseIpAddress,
  unmapIpv4,
} from "../../src/egress/ip-address.js";

const canonical = (text: string) => formatIpAddress(parseIpAddress(text));

describe("IP address literals", () => {
  it("reads strict dotted decimal IPv4 only", () => {
    expect(canonical("127.0.0.1")).toBe("127.0.0.1");
    expect(canonical("0.0.0.0")).toBe("0.0.0.0");
    expect(canonical("255.255.255.255")).toBe("255.255.255.255");
    // Spellings inet_aton reads as 127.0.0.1 but other parsers do not: refused.
    for (const loose of ["127.1", "0x7f.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.0.0.01", "127.0.0.1."])
      expect(tryParseIpAddress(loose), loose).toBeUndefined();
    expect(() => parseIpv4("010.0.0.1")).toThrow(/leading zeros/);
    expect(() => parseIpv4("256.0.0.1")).toThrow(/0-255/);
  });

  it("reads IPv6 with :: shorthand and a dotted IPv4 tail, and writes RFC 5952 text", () => {
    expect(canonical("::")).toBe("::");
    expect(canonical("::1")).toBe("::1");
    expect(canonical("2001:DB8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(canonical("fe80:0000:0000:0000:0000:0000:0000:0001")).toBe("fe80::1");
    expect(canonical("::ffff:7f00:1")).toBe("::ffff:127.0.0.1");
    expect(canonical("::FFFF:127.0.0.1")).toBe("::ffff:127.0.0.1");
    expect(canonical("1:2:3:4:5:6:7:8")).toBe("1:2:3:4:5:6:7:8");
  });

  it("refuses zone ids and malformed IPv6", () => {
    expect(() => parseIpAddress("fe80::1%eth0")).toThrow(/zone ids/);
    expect(() => parseIpAddress("fe80::1%25eth0")).toThrow(/zone ids/);
    for (const bad of [
      "1:::2",
      "1::2::3",
      "12345::1",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
      "1.2.3.4::",
      ":1::",
      "1::2:",
      "g::1",
    ])
      expect(tryParseIpAddress(bad), bad).toBeUndefined();
  });

  it("turns IPv4-mapped IPv6 into the IPv4 address it reaches", () => {
    expect(formatIpAddress(unmapIpv4(parseIpAddress("::ffff:10.1.2.3")))).toBe("10.1.2.3");
    expect(formatIpAddress(unmapIpv4(parseIpAddress("::10.1.2.3")))).toBe("::a01:203");
  });

  it("tests CIDR membership within one family", () => {
    const network = parseIpAddress("10.2.0.0");
    expect(inNetwork(parseIpAddress("10.2.255.1"), network, 16)).toBe(true);
    expect(inNetwork(parseIpAddress("10.3.0.1"), network, 16)).toBe(false);
    expect(inNetwork(parseIpAddress("::ffff:10.2.0.1"), network, 16)).toBe(false);
    expect(inNetwork(parseIpAddress("1.2.3.4"), parseIpAddress("0.0.0.0"), 0)).toBe(true);
  });

  it("knows which hosts a resolver would read as a loose IPv4 number", () => {
    for (const host of ["127.1", "0x7f.1", "2130706433", "1.2.3.4.5", "example.0x10", "a.123"])
      expect(looksLikeLooseIpv4(host), host).toBe(true);
    for (const host of ["example.com", "1password.com", "123.example", "0x7f.example"])
      expect(looksLikeLooseIpv4(host), host).toBe(false);
  });
});
