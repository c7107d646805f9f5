/**
 * Issue 26, items 1 and 4 end to end on the child's side: web.fetch and the forwarder
 * through the real egress proxy (src/egress/), not the stand-in. `allowed.test` is mapped
 * to loopback the way operators and tests do it (an EGRESS_HOSTS mapping); every other
 * name is refused by the agent's allow list, and the refusal reaches web.fetch and the
 * forwarder's record with the proxy's own words.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllowList } from "../../src/egress/allow-list.js";
import { parseEgressHosts } from "../../src/egress/egress-hosts.js";
import { type EgressProxy, startEgressProxy } from "../../src/egress/egress-proxy.js";
import { createProxiedFetch } from "../../src/toolhost/net/proxied-fetch.js";
import { proxyEnvironment } from "../../src/toolhost/net/proxy-environment.js";
import { startProxyForwarder } from "../../src/toolhost/net/proxy-forwarder.js";
import { DEFAULT_TOOL_LIMITS, type ToolContext } from "../../src/toolhost/tools/define-tool.js";
import { createWebFetchTool } from "../../src/toolhost/tools/web-fetch.js";
import { silentLogger } from "../helpers/toolhost.js";
import { tempDir } from "../helpers/temp-dir.js";
import { makeTestCertificate, type Origin, startOrigin, type TestCertificate } from "./net/test-origin.js";

const PAGE = `<html><head><title>Allowed page</title></head><body><p>Reached through the real proxy.</p></body></html>`;

let proxy: EgressProxy;
let socketPath: string;
let origin: Origin;
let secure: Origin;
let certificate: TestCertificate;

beforeAll(async () => {
  const dir = tempDir("laoding-egress-fetch-", "file");
  certificate = makeTestCertificate(dir, "allowed.test");
  const handler: Parameters<typeof startOrigin>[0] = (request, response) => {
    if (request.url === "/away") {
      response.writeHead(302, { location: "http://elsewhere.test/secret" });
      response.end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(PAGE);
  };
  origin = await startOrigin(handler);
  secure = await startOrigin(handler, certificate);
  proxy = startEgressProxy({
    socketDir: join(dir, "sockets"),
    hosts: parseEgressHosts("127.0.0.1 allowed.test elsewhere.test\n", "test EGRESS_HOSTS"),
    ownEndpoints: [],
    logger: pino({ level: "silent" }),
    lookup: async (name) => Promise.reject(Object.assign(new Error(name), { code: "ENOTFOUND" })),
  });
  socketPath = await proxy.addAgent({ agentId: "alpha", allow: parseAllowList(["allowed.test"]) });
});

afterAll(async () => {
  await Promise.all([proxy?.close(), origin?.close(), secure?.close()]);
});

function context(): ToolContext {
  const limits = { ...DEFAULT_TOOL_LIMITS, outputMaxBytes: 100_000, shellTimeoutMs: 5_000, shellMaxTimeoutMs: 10_000 };
  return {
    cwd: "/",
    sandbox: undefined as never,
    shell: undefined as never,
    limits,
    signal: new AbortController().signal,
  };
}

describe("web.fetch through the real egress proxy", () => {
  it("reaches an allowed host over http and https, and reports a refused redirect in the proxy's words", async () => {
    const webFetch = createWebFetchTool({ fetch: createProxiedFetch({ socketPath, tls: { ca: certificate.cert } }) });

    const page = await webFetch.execute({ url: `http://allowed.test:${origin.port}/page` }, context());
    expect(page.output).toBe(
      `# Allowed page\nURL: http://allowed.test:${origin.port}/page\n\nReached through the real proxy.`,
    );
    const tunnelled = await webFetch.execute({ url: `https://allowed.test:${secure.port}/page` }, context());
    expect(tunnelled.output).toContain("Reached through the real proxy.");

    await expect(webFetch.execute({ url: `http://allowed.test:${origin.port}/away` }, context())).rejects.toMatchObject(
      {
        code: "NETWORK_REFUSED",
        message: "elsewhere.test is not on this agent's network allow list",
      },
    );
    expect(proxy.stats("alpha")).toMatchObject({ refused: 1 });
  });

  it("carries curl through the forwarder, and the forwarder records the proxy's refusal", async () => {
    const forwarder = await startProxyForwarder({ socketPath, logger: silentLogger });
    try {
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...proxyEnvironment(forwarder.url) };
      const curl = promisify(execFile);
      const { stdout } = await curl("curl", ["-sS", `http://allowed.test:${origin.port}/`], { env });
      expect(stdout).toBe(PAGE);

      const started = Date.now();
      const refused = await curl("curl", ["-sS", "https://elsewhere.test/"], { env }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 56 });
      expect(forwarder.refusalsSince(started)).toEqual(["elsewhere.test is not on this agent's network allow list"]);
    } finally {
      await forwarder.close();
    }
  });
});
