import { describe, expect, it } from "vitest";
import { parseAllowList } from "../../src/egress/allow-list.js";
import { decideEgress, type EgressRequest, type OwnEndpoint } from "../../src/egress/egress-decision.js";
import { parseEgressHosts } from "../../src/egress/egress-hosts.js";

const hosts = parseEgressHosts("127.0.0.1 allowed.test mapped.corp.example\n10.9.9.9 model.test\n", "hosts");
/** A resolver with fixed answers, recording what it was asked. */
function fixedDns(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup = async (name: string) => {
    asked.push(name);
    const found = answers[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return found;
  };
  return { asked, lookup };
}

const dns = fixedDns({
  "api.github.com": ["140.82.112.3", "2606:50c0:8000::154"],
  "rebind.test": ["127.0.0.1"],
  "mixed.test": ["140.82.112.3", "10.0.0.7"],
  "mapped-loopback.test": ["::ffff:127.0.0.1"],
  "internal.corp.example": ["10.2.0.5"],
  "empty.test": [],
  "weird.test": ["2130706433"],
  "admin.test": ["140.82.112.3"],
});

const ownEndpoints: OwnEndpoint[] = [
  { label: "admin", address: "127.0.0.1", port: 7700 },
  { label: "webhooks", address: "0.0.0.0", port: 8443 },
  { label: "public webhook", address: "140.82.112.3", port: 9000 },
  { label: "model endpoint", address: "10.9.9.9", port: 8000, exemptWhenListedByName: true, name: "model.test" },
];

const allow = parseAllowList([
  "api.github.com",
  "allowed.test",
  "*.corp.example",
  "rebind.test",
  "mixed.test",
  "mapped-loopback.test",
  "empty.test",
  "weird.test",
  "nowhere.test",
  "10.2.0.0/16:443",
  "203.0.113.7",
  "[2001:db8::/32]:443",
  "127.0.0.1/32:7700",
  "model.test",
  "admin.test",
]);

const decide = (host: string, port: number, overrides: Partial<EgressRequest> = {}) =>
  decideEgress({
    allow,
    host,
    port,
    hosts,
    lookup: dns.lookup,
    ownEndpoints,
    localAddresses: ["192.0.2.10"],
    ...overrides,
  });

describe("decideEgress", () => {
  it("allows a listed name at every address DNS gives, connecting to the first", async () => {
    expect(await decide("api.github.com", 443)).toEqual({
      allowed: true,
      address: "140.82.112.3",
      addresses: ["140.82.112.3", "2606:50c0:8000::154"],
      via: "dns",
    });
    expect(await decide("API.GitHub.com.", 443)).toMatchObject({ allowed: true });
  });

  it("refuses an unlisted name without resolving it, with the contract's reason", async () => {
    const before = dns.asked.length;
    expect(await decide("example.com", 443)).toEqual({
      allowed: false,
      outcome: "refused",
      reason: "example.com is not on this agent's network allow list",
    });
    expect(await decide("corp.example", 443)).toMatchObject({
      reason: "corp.example is not on this agent's network allow list",
    });
    expect(dns.asked.length).toBe(before);
  });

  it("refuses a name DNS resolves to an internal address (rebinding), unless an address entry covers it", async () => {
    expect(await decide("rebind.test", 80)).toEqual({
      allowed: false,
      outcome: "refused",
      reason: "rebind.test resolves to 127.0.0.1, an internal address not on this agent's network allow list",
      address: "127.0.0.1",
    });
    expect(await decide("mapped-loopback.test", 80)).toMatchObject({
      reason:
        "mapped-loopback.test resolves to ::ffff:127.0.0.1, an internal address not on this agent's network allow list",
    });
    // One internal address among public ones is enough to refuse.
    expect(await decide("mixed.test", 443)).toMatchObject({ allowed: false, address: "10.0.0.7" });
    // 10.2.0.0/16:443 is on the list: allowed on 443, not on 80.
    expect(await decide("internal.corp.example", 443)).toMatchObject({
      allowed: true,
      address: "10.2.0.5",
      via: "dns",
    });
    expect(await decide("internal.corp.example", 80)).toMatchObject({ allowed: false, outcome: "refused" });
    // A resolver answer that is not a strict address fails closed.
    expect(await decide("weird.test", 80)).toMatchObject({ allowed: false, outcome: "refused" });
  });

  it("trusts EGRESS_HOSTS names to their internal addresses, without asking DNS", async () => {
    const before = dns.asked.length;
    expect(await decide("allowed.test", 8080)).toEqual({
      allowed: true,
      address: "127.0.0.1",
      addresses: ["127.0.0.1"],
      via: "hosts",
    });
    expect(await decide("mapped.corp.example", 80)).toMatchObject({ allowed: true, via: "hosts" });
    expect(dns.asked.length).toBe(before);
    // A mapped name still needs a name entry.
    const unlisted = await decideEgress({
      allow: parseAllowList(["other.test"]),
      host: "allowed.test",
      port: 80,
      hosts,
      lookup: dns.lookup,
      ownEndpoints,
    });
    expect(unlisted).toMatchObject({
      allowed: false,
      reason: "allowed.test is not on this agent's network allow list",
    });
  });

  it("lets IP literals through only on an address entry", async () => {
    expect(await decide("203.0.113.7", 80)).toEqual({
      allowed: true,
      address: "203.0.113.7",
      addresses: ["203.0.113.7"],
      via: "literal",
    });
    expect(await decide("10.2.1.1", 443)).toMatchObject({ allowed: true, via: "literal" });
    expect(await decide("10.2.1.1", 80)).toMatchObject({
      reason: "10.2.1.1 is not on this agent's network allow list",
    });
    expect(await decide("140.82.112.3", 443)).toMatchObject({
      reason: "140.82.112.3 is not on this agent's network allow list",
    });
    expect(await decide("2001:db8::5", 443)).toMatchObject({ allowed: true, address: "2001:db8::5" });
    expect(await decide("2001:db8::5", 80)).toMatchObject({
      reason: "[2001:db8::5] is not on this agent's network allow list",
    });
    // The mapped spelling of a listed IPv4 address reaches that address, and is connected to as IPv4.
    expect(await decide("::ffff:203.0.113.7", 80)).toMatchObject({ allowed: true, address: "203.0.113.7" });
    expect(await decide("::ffff:127.0.0.2", 80)).toMatchObject({ allowed: false });
  });

  it("refuses loose and ambiguous literal spellings by saying why", async () => {
    for (const host of ["127.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.0.0.01", "0x7f000001"]) {
      const decision = await decide(host, 80);
      expect(decision, host).toMatchObject({ allowed: false, outcome: "refused" });
      expect(decision.allowed === false && decision.reason, host).toContain(`${host} is not a host this proxy accepts`);
    }
    expect(await decide("fe80::1%eth0", 80)).toMatchObject({ reason: expect.stringContaining("zone ids") });
    expect(await decide("fe80::1%25eth0", 80)).toMatchObject({ reason: expect.stringContaining("zone ids") });
    expect(await decide("a b", 80)).toMatchObject({ allowed: false });
  });

  it("refuses the bot's own endpoints by address and port, for every local spelling", async () => {
    const ownReason = (host: string, port: number, label: string) => ({
      allowed: false,
      reason: `${host}:${port} is one of the bot's own endpoints (${label})`,
    });
    // allowed.test maps to 127.0.0.1 and is listed for any port; the admin port is still refused.
    expect(await decide("allowed.test", 7700)).toMatchObject(ownReason("allowed.test", 7700, "admin"));
    expect(await decide("127.0.0.1", 7700)).toMatchObject(ownReason("127.0.0.1", 7700, "admin"));
    const everyLoopback = { allow: parseAllowList(["0.0.0.0/0", "::/0"]) };
    for (const host of ["127.0.0.2", "0.0.0.0", "::1", "::ffff:127.0.0.1", "::", "192.0.2.10"])
      expect(await decide(host, 7700, everyLoopback), host).toMatchObject({
        allowed: false,
        reason: expect.stringContaining("(admin)"),
      });
    // A 0.0.0.0 listener is reached through the machine's own interface addresses too.
    expect(await decide("192.0.2.10", 8443, everyLoopback)).toMatchObject({
      reason: expect.stringContaining("(webhooks)"),
    });
    expect(await decide("127.0.0.1", 8443, everyLoopback)).toMatchObject({
      reason: expect.stringContaining("(webhooks)"),
    });
    // A public listener is refused at its own address only.
    expect(await decide("admin.test", 9000)).toMatchObject(ownReason("admin.test", 9000, "public webhook"));
    expect(await decide("api.github.com", 443)).toMatchObject({ allowed: true });
  });

  it("exempts the model endpoint when its name is on the list by name, not by wildcard or address", async () => {
    expect(await decide("model.test", 8000)).toMatchObject({ allowed: true, address: "10.9.9.9", via: "hosts" });
    const wildcardOnly = { allow: parseAllowList(["*.test"]) };
    expect(await decide("model.test", 8000, wildcardOnly)).toMatchObject({
      reason: "model.test:8000 is one of the bot's own endpoints (model endpoint)",
    });
    expect(await decide("10.9.9.9", 8000, { allow: parseAllowList(["10.9.9.9"]) })).toMatchObject({
      reason: "10.9.9.9:8000 is one of the bot's own endpoints (model endpoint)",
    });
    // Another listed name for the same address is not the model's name.
    const alias = parseEgressHosts("10.9.9.9 alias.test\n", "hosts");
    expect(await decide("alias.test", 8000, { allow: parseAllowList(["alias.test"]), hosts: alias })).toMatchObject({
      allowed: false,
    });
  });

  it("reports resolution failures as failed (502), not refused", async () => {
    expect(await decide("nowhere.test", 443)).toEqual({
      allowed: false,
      outcome: "failed",
      reason: "nowhere.test could not be resolved (ENOTFOUND)",
    });
    expect(await decide("empty.test", 443)).toMatchObject({
      outcome: "failed",
      reason: "empty.test could not be resolved (no addresses)",
    });
  });
});
