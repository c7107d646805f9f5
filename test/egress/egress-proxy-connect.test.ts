/**
 * CONNECT tunnels through the egress proxy's Unix socket, spoken with raw node:net as the
 * toolhost's forwarder relays them: plain bytes, TLS to a local HTTPS server with a
 * throwaway certificate, refusals on the raw socket, and teardown of both ends.
 */
import { once } from "node:events";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { describe, expect, it, vi } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import { makeTestCertificate, type TestCertificate } from "../toolhost/net/test-origin.js";
import {
  closedPort,
  connectThrough,
  headerMap,
  readHead,
  readToEnd,
  startEcho,
  startOrigin,
  startProxy,
} from "./proxy-fixture.js";

const HOSTS = "127.0.0.1 allowed.test refused.test admin.test secure.test\n";

describe("egress proxy, CONNECT", () => {
  it("tunnels to an allowed name and counts the bytes both ways", async () => {
    const origin = await startOrigin("allowed");
    const { socketPath, proxy, logs, logText } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const answer = await connectThrough(socketPath, `allowed.test:${origin.port}`);
    expect(answer.statusLine).toBe("HTTP/1.1 200 Connection established");
    answer.socket.write(`GET /through HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`);
    const text = await readToEnd(answer.socket, answer.rest);
    expect(text).toContain('"url":"/through"');
    await vi.waitFor(() => expect(logs.some((line) => line.msg === "egress connection")).toBe(true));
    const line = logs.find((entry) => entry.msg === "egress connection");
    expect(line).toMatchObject({ method: "CONNECT", host: "allowed.test", address: "127.0.0.1", allowed: true });
    const request = "GET /through HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n";
    expect(line?.bytesUp).toBe(request.length);
    expect(line?.bytesDown).toBe(Buffer.byteLength(text));
    expect(proxy.stats("alpha")).toMatchObject({
      allowed: 1,
      bytesUp: request.length,
      bytesDown: Buffer.byteLength(text),
    });
    expect(logText()).not.toContain("c2VjcmV0"); // the Proxy-Authorization the client sent
  });

  it("passes bytes sent right behind the CONNECT head", async () => {
    const echo = await startEcho();
    const { socketPath } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const answer = await connectThrough(socketPath, `allowed.test:${echo.port}`, "early-bytes");
    expect(answer.statusLine).toBe("HTTP/1.1 200 Connection established");
    let echoed = answer.rest.toString();
    answer.socket.on("data", (chunk: Buffer) => {
      echoed += chunk.toString();
    });
    answer.socket.resume();
    await vi.waitFor(() => expect(echoed).toBe("early-bytes"));
  });

  it("refuses on the raw socket with the contract's 403 shape", async () => {
    const origin = await startOrigin("refused");
    const { socketPath } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const answer = await connectThrough(socketPath, `refused.test:${origin.port}`);
    const reason = "refused.test is not on this agent's network allow list";
    expect(answer.statusLine).toBe("HTTP/1.1 403 Forbidden");
    expect(headerMap(answer.head)).toEqual({
      "x-laoding-refused": reason,
      "content-type": "text/plain; charset=utf-8",
      "content-length": String(reason.length),
      connection: "close",
    });
    expect(await readToEnd(answer.socket, answer.rest)).toBe(reason);
    expect(origin.connections).toBe(0);
  });

  it("refuses DNS rebinding to loopback, loose spellings and unlisted literals; allows a listed literal", async () => {
    const origin = await startOrigin("allowed");
    const lookup = async (name: string) => (name === "rebind.test" ? ["127.0.0.1"] : []);
    const { socketPath } = await startProxy({ allow: ["rebind.test", "allowed.test"], hosts: HOSTS, lookup });
    const refusal = async (target: string) => {
      const answer = await connectThrough(socketPath, target);
      expect(answer.statusLine, target).toBe("HTTP/1.1 403 Forbidden");
      return headerMap(answer.head)["x-laoding-refused"];
    };
    expect(await refusal(`rebind.test:${origin.port}`)).toBe(
      "rebind.test resolves to 127.0.0.1, an internal address not on this agent's network allow list",
    );
    for (const loose of ["0x7f.1", "127.1", "2130706433", "0177.0.0.1"])
      expect(await refusal(`${loose}:${origin.port}`)).toMatch(/is not a host this proxy accepts: it ends in a number/);
    expect(await refusal(`[::ffff:127.0.0.1]:${origin.port}`)).toBe(
      "[::ffff:127.0.0.1] is not on this agent's network allow list",
    );
    expect(await refusal(`[fe80::1%25lo]:${origin.port}`)).toContain("zone ids");
    expect(await refusal(`127.0.0.1:${origin.port}`)).toBe("127.0.0.1 is not on this agent's network allow list");
    expect(origin.connections).toBe(0);

    const literal = await startProxy({ allow: ["127.0.0.1/32"], agentId: "beta" });
    const answer = await connectThrough(literal.socketPath, `[::ffff:127.0.0.1]:${origin.port}`);
    expect(answer.statusLine).toBe("HTTP/1.1 200 Connection established");
    answer.socket.write("GET /mapped HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(await readToEnd(answer.socket, answer.rest)).toContain('"url":"/mapped"');
  });

  it("refuses the bot's own endpoint even when its name is allowed", async () => {
    const admin = await startOrigin("admin");
    const { socketPath } = await startProxy({
      allow: ["admin.test", "127.0.0.0/8"],
      hosts: HOSTS,
      ownEndpoints: [{ label: "admin", address: "0.0.0.0", port: admin.port }],
    });
    for (const target of [`admin.test:${admin.port}`, `127.0.0.1:${admin.port}`, `127.0.0.2:${admin.port}`]) {
      const answer = await connectThrough(socketPath, target);
      expect(answer.statusLine, target).toBe("HTTP/1.1 403 Forbidden");
      expect(headerMap(answer.head)["x-laoding-refused"]).toBe(
        `${target.split(":")[0]}:${admin.port} is one of the bot's own endpoints (admin)`,
      );
    }
    expect(admin.connections).toBe(0);
  });

  it("answers 502 for an allowed name whose port has no listener", async () => {
    const port = await closedPort();
    const { socketPath, proxy } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const answer = await connectThrough(socketPath, `allowed.test:${port}`);
    expect(answer.statusLine).toBe("HTTP/1.1 502 Bad Gateway");
    const reason = `could not connect to allowed.test:${port} (127.0.0.1: ECONNREFUSED)`;
    expect(headerMap(answer.head)["x-laoding-failed"]).toBe(reason);
    expect(await readToEnd(answer.socket, answer.rest)).toBe(reason);
    expect(proxy.stats("alpha")).toMatchObject({ failed: 1, allowed: 0, refused: 0 });
  });

  it("frees the upstream socket when the client disconnects mid-tunnel", async () => {
    const echo = await startEcho();
    const { socketPath, logs } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS });
    const answer = await connectThrough(socketPath, `allowed.test:${echo.port}`);
    expect(answer.statusLine).toBe("HTTP/1.1 200 Connection established");
    await vi.waitFor(() => expect(echo.open.size).toBe(1));
    answer.socket.write("half a messa");
    answer.socket.destroy();
    await vi.waitFor(() => expect(echo.open.size).toBe(0));
    await vi.waitFor(() =>
      expect(logs.find((line) => line.msg === "egress connection")).toMatchObject({ allowed: true, bytesUp: 12 }),
    );
  });

  it("closes an idle tunnel at both ends", async () => {
    const echo = await startEcho();
    const { socketPath } = await startProxy({ allow: ["allowed.test"], hosts: HOSTS, idleTimeoutMs: 100 });
    const answer = await connectThrough(socketPath, `allowed.test:${echo.port}`);
    await vi.waitFor(() => expect(echo.connections).toBe(1));
    answer.socket.resume();
    await once(answer.socket, "close");
    await vi.waitFor(() => expect(echo.open.size).toBe(0));
  });

  it("carries TLS end to end to a local HTTPS server", async (context) => {
    let certificate: TestCertificate | undefined;
    try {
      certificate = makeTestCertificate(tempDir("laoding-egress-tls-"), "secure.test");
    } catch {
      // Skipped below: context.skip() throws, which the compiler cannot tell.
    }
    if (!certificate) return context.skip("openssl is not available to make a throwaway certificate");
    const { cert } = certificate;
    const server = createHttpsServer(certificate, (req, res) => {
      res.end(`secure hello ${req.url}`);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      const { socketPath } = await startProxy({ allow: ["secure.test:" + port], hosts: HOSTS });
      const answer = await connectThrough(socketPath, `secure.test:${port}`);
      expect(answer.statusLine).toBe("HTTP/1.1 200 Connection established");
      answer.socket.resume();
      const secure = tlsConnect({ socket: answer.socket, servername: "secure.test", ca: cert });
      await once(secure, "secureConnect");
      expect(secure.authorized).toBe(true);
      secure.write("GET /tls HTTP/1.1\r\nHost: secure.test\r\nConnection: close\r\n\r\n");
      const head = await readHead(secure as unknown as import("node:net").Socket);
      expect(head.statusLine).toBe("HTTP/1.1 200 OK");
      expect(await readToEnd(secure as unknown as import("node:net").Socket, head.rest)).toBe("secure hello /tls");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
