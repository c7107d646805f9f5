import { describe, expect, it } from "vitest";
import { internalAddressKind } from "../../src/egress/address-class.js";

describe("internalAddressKind", () => {
  it("labels internal IPv4 ranges and leaves public addresses alone", () => {
    const cases: [string, string | undefined][] = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.1", undefined],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["100.64.0.1", "carrier-grade NAT"],
      ["100.127.255.255", "carrier-grade NAT"],
      ["100.128.0.1", undefined],
      ["0.0.0.0", "unspecified"],
      ["0.1.2.3", "unspecified"],
      ["224.0.0.251", "multicast"],
      ["239.255.255.250", "multicast"],
      ["255.255.255.255", "broadcast"],
      ["240.0.0.1", "reserved"],
      ["192.0.2.1", "documentation"],
      ["198.18.0.1", "benchmarking"],
      ["8.8.8.8", undefined],
      ["140.82.112.3", undefined],
    ];
    for (const [address, kind] of cases) expect(internalAddressKind(address), address).toBe(kind);
  });

  it("labels internal IPv6 ranges; everything outside 2000::/3 is reserved", () => {
    const cases: [string, string | undefined][] = [
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["fd00::1", "unique local"],
      ["fc00::1", "unique local"],
      ["fe80::1", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "documentation"],
      ["100::1", "discard-only"],
      ["4000::1", "reserved"],
      ["2606:4700:4700::1111", undefined],
      ["2a00:1450:4001:80b::200e", undefined],
    ];
    for (const [address, kind] of cases) expect(internalAddressKind(address), address).toBe(kind);
  });

  it("judges IPv6 forms that embed IPv4 by the IPv4 address, however they are spelled", () => {
    const cases: [string, string | undefined][] = [
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::FFFF:7F00:0001", "loopback"],
      ["0:0:0:0:0:ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:169.254.169.254", "link-local"],
      ["::ffff:0.0.0.0", "unspecified"],
      ["::ffff:8.8.8.8", undefined],
      ["::127.0.0.1", "loopback"],
      ["::8.8.8.8", "reserved"],
      ["::ffff:0:127.0.0.1", "loopback"],
      ["64:ff9b::127.0.0.1", "loopback"],
      ["64:ff9b::a00:1", "private"],
      ["64:ff9b::8.8.8.8", undefined],
      ["64:ff9b:1::1", "NAT64 local-use"],
      ["2002:7f00:1::", "loopback"],
      ["2002:a00:1::1", "private"],
      ["2002:808:808::1", undefined],
    ];
    for (const [address, kind] of cases) expect(internalAddressKind(address), address).toBe(kind);
  });

  it("accepts what Node's resolver prints (zone ids) and fails closed on anything else", () => {
    expect(internalAddressKind("fe80::1%eth0")).toBe("link-local");
    expect(internalAddressKind("fe80::1%2")).toBe("link-local");
    expect(internalAddressKind("127.1")).toBe("unrecognized address");
    expect(internalAddressKind("2130706433")).toBe("unrecognized address");
    expect(internalAddressKind("localhost")).toBe("unrecognized address");
    expect(internalAddressKind("")).toBe("unrecognized address");
  });
});
