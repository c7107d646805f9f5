import { describe, expect, it } from "vitest";
import { parseAbsoluteTarget, parseConnectTarget, RequestTargetError } from "../../src/egress/request-target.js";

describe("request targets", () => {
  it("reads CONNECT host:port, with IPv6 in brackets", () => {
    expect(parseConnectTarget("api.github.com:443")).toEqual({ host: "api.github.com", port: 443 });
    expect(parseConnectTarget("[::ffff:127.0.0.1]:8443")).toEqual({ host: "::ffff:127.0.0.1", port: 8443 });
    expect(parseConnectTarget("0x7f.1:80")).toEqual({ host: "0x7f.1", port: 80 });
    for (const bad of [
      "api.github.com",
      "api.github.com:",
      "::1:443",
      "[::1]",
      "host:0",
      "host:65536",
      "host:8a",
      ":443",
      "[::1]x:4",
    ])
      expect(() => parseConnectTarget(bad), bad).toThrow(RequestTargetError);
  });

  it("reads absolute-form http URLs without normalizing the host", () => {
    expect(parseAbsoluteTarget("http://allowed.test:8080/a/b?c=d")).toEqual({
      host: "allowed.test",
      port: 8080,
      path: "/a/b?c=d",
      authority: "allowed.test:8080",
    });
    expect(parseAbsoluteTarget("HTTP://Example.com")).toMatchObject({ host: "Example.com", port: 80, path: "/" });
    expect(parseAbsoluteTarget("http://example.com?q=1")).toMatchObject({ path: "/?q=1" });
    expect(parseAbsoluteTarget("http://[::1]:81/x")).toMatchObject({ host: "::1", port: 81, authority: "[::1]:81" });
    expect(parseAbsoluteTarget("http://2130706433/")).toMatchObject({ host: "2130706433" });
  });

  it("refuses origin-form, https, other schemes and user info with a reason", () => {
    expect(() => parseAbsoluteTarget("/path")).toThrow(/forward proxy: send absolute-form/);
    expect(() => parseAbsoluteTarget("https://example.com/")).toThrow(/use CONNECT/);
    expect(() => parseAbsoluteTarget("ftp://example.com/")).toThrow(/ftp:\/\//);
    expect(() => parseAbsoluteTarget("http://user:pw@example.com/")).toThrow(/Authorization header/);
    expect(() => parseAbsoluteTarget("http:///x")).toThrow(/names no host/);
  });
});
