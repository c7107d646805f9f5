import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EgressHostsError, loadEgressHosts, parseEgressHosts } from "../../src/egress/egress-hosts.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

describe("EGRESS_HOSTS", () => {
  it("maps names to addresses, with comments, blank lines, tabs and several names a line", () => {
    const hosts = parseEgressHosts(
      [
        "# test hosts",
        "",
        "127.0.0.1\tallowed.test  Also.Allowed.test.   # trailing comment",
        "   ",
        "::1 allowed.test",
        "::ffff:10.0.0.5 internal.example",
        "127.0.0.1 allowed.test",
        "",
      ].join("\r\n"),
      "hosts",
    );
    expect(hosts.get("allowed.test")).toEqual(["127.0.0.1", "::1"]);
    expect(hosts.get("also.allowed.test")).toEqual(["127.0.0.1"]);
    expect(hosts.get("internal.example")).toEqual(["10.0.0.5"]);
    expect(hosts.size).toBe(3);
  });

  it("names file:line and what is wrong", () => {
    const failure = (text: string) => {
      try {
        parseEgressHosts(text, "/etc/laoding/egress-hosts");
      } catch (error) {
        expect(error).toBeInstanceOf(EgressHostsError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(failure("# ok\n127.0.0.1\n")).toMatch(
      /^\/etc\/laoding\/egress-hosts:2: the address 127\.0\.0\.1 has no names/,
    );
    expect(failure("allowed.test 127.0.0.1")).toMatch(/:1: "allowed\.test" is not an IP address/);
    expect(failure("127.1 short.test")).toMatch(/:1: "127\.1" is not an IP address/);
    expect(failure("fe80::1%eth0 a.test")).toMatch(/zone ids/);
    expect(failure("\n\n10.0.0.1 *.corp.example")).toMatch(/:3: .*wildcards are not allowed/);
    expect(failure("10.0.0.1 bad_name-.test")).toMatch(/:1: "bad_name-\.test" is not a host name/);
    expect(failure("10.0.0.1 1.2.3.4")).toMatch(/ends in a number/);
  });

  it("loads a file, and names a file that cannot be read", async () => {
    const dir = tempDir("laoding-egress-hosts-");
    const path = writeFile(join(dir, "hosts"), "127.0.0.1 allowed.test\n");
    expect((await loadEgressHosts(path)).get("allowed.test")).toEqual(["127.0.0.1"]);
    await expect(loadEgressHosts(join(dir, "missing"))).rejects.toThrow(
      /missing: cannot read the EGRESS_HOSTS file \(ENOENT\)/,
    );
    writeFile(join(dir, "bad"), "1.2.3.4 ok.test\nnonsense\n");
    await expect(loadEgressHosts(join(dir, "bad"))).rejects.toThrow(`${join(dir, "bad")}:2:`);
  });
});
