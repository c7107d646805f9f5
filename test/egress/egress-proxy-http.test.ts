/**
 * Plain (absolute-form) HTTP through the egress proxy's Unix socket, against real loopback
 * origins named by a real EGRESS_HOSTS file: allowed.test is on the list, refused.test is
 * not; rebind.test is listed but DNS (the injected resolver) says 127.0.0.1.
 */
import { request } from "node:http";
import { createConnection } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { closedPort, proxiedRequest, startOrigin, startProxy } from "./proxy-fixture.js";

async function setup() {
  const allowed = await startOrigin("allowed");
  const refused = await startOrigin("refused");
  const admin = await startOrigin("admin");
  const fixture = await startProxy({
    allow: ["allowed.test", "admin.test", "rebind.test", "gone.test"],
    hosts: ["# names for the test origins", "127.0.0.1 allowed.test refused.test admin.test"].join("\n"),
    ownEndpoints: [{ label: "admin", address: "127.0.0.1", port: admin.port }],
    lookup: async (name) => {
      if (name === "rebind.test") return ["127.0.0.1"];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    },
  });
  return { allowed, refused, admin, ...fixture };
}

describe("egress proxy, plain HTTP", () => {
  it("forwards an allowed request to the mapped address with end-to-end headers only", async () => {
    const { allowed, socketPath, proxy, logs, logText } = await setup();
    const response = await proxiedRequest(socketPath, `http://Allowed.Test:${allowed.port}/path?q=1`, {
      headers: {
        Host: "wrong.example",
        Authorization: "Bearer origin-secret-123",
        "Proxy-Authorization": "Basic proxy-secret-456",
        Connection: "keep-alive, X-Hop",
        "X-Hop": "hop",
        "X-End": "end",
      },
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ origin: "allowed", method: "GET", url: "/path?q=1", body: "" });
    expect(response.headers.connection).toBe("close");
    expect(response.headers["keep-alive"]).toBeUndefined();
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    const seen = allowed.requests[0]?.headers;
    expect(seen?.host).toBe(`Allowed.Test:${allowed.port}`);
    expect(seen?.authorization).toBe("Bearer origin-secret-123");
    expect(seen?.["x-end"]).toBe("end");
    expect(seen?.["proxy-authorization"]).toBeUndefined();
    expect(seen?.["x-hop"]).toBeUndefined();
    expect(seen?.connection).toBe("close");

    await vi.waitFor(() => expect(logs.filter((line) => line.msg === "egress connection")).toHaveLength(1));
    const line = logs.find((entry) => entry.msg === "egress connection");
    expect(line).toMatchObject({
      level: 30,
      agentId: "alpha",
      host: "allowed.test",
      port: allowed.port,
      address: "127.0.0.1",
      allowed: true,
      via: "hosts",
    });
    expect(line?.bytesUp).toBeGreaterThan(0);
    expect(line?.bytesDown).toBeGreaterThan(response.body.length);
    // Headers and paths may hold secrets: none reaches the log.
    expect(logText()).not.toContain("secret");
    expect(logText()).not.toContain("/path");
    const stats = proxy.stats("alpha");
    expect(stats).toMatchObject({ allowed: 1, refused: 0, failed: 0 });
    expect(stats?.bytesUp).toBe(line?.bytesUp);
    expect(stats?.bytesDown).toBe(line?.bytesDown);
  });

  it("never passes on an origin's own X-Laoding-* headers, which only the proxy may send", async () => {
    const { allowed, socketPath } = await setup();
    const response = await proxiedRequest(socketPath, `http://allowed.test:${allowed.port}/impersonate`);
    expect(response.status).toBe(200);
    expect(response.headers["x-origin"]).toBe("allowed");
    expect(response.headers["x-laoding-refused"]).toBeUndefined();
  });

  it("answers a client that half-closes after its request, as the origin would", async () => {
    const { allowed, socketPath } = await setup();
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.end(`GET http://allowed.test:${allowed.port}/half HTTP/1.1\r\nHost: allowed.test\r\n\r\n`);
    await closed;
    const answer = Buffer.concat(chunks).toString();
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"url":"/half"');
  });

  it("streams request bodies up, chunked or with a length, and answers HEAD without a body", async () => {
    const { allowed, socketPath } = await setup();
    const url = `http://allowed.test:${allowed.port}/upload`;
    const chunked = await proxiedRequest(socketPath, url, { method: "POST", body: ["first,", "second,", "third"] });
    expect(JSON.parse(chunked.body)).toMatchObject({ method: "POST", body: "first,second,third" });
    const sized = await proxiedRequest(socketPath, url, {
      method: "PUT",
      headers: { "Content-Length": "5", "Content-Type": "text/plain" },
      body: "hello",
    });
    expect(JSON.parse(sized.body)).toMatchObject({ method: "PUT", body: "hello" });
    expect(allowed.requests[1]?.headers["content-type"]).toBe("text/plain");
    const head = await proxiedRequest(socketPath, url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    const deleted = await proxiedRequest(socketPath, url, { method: "DELETE" });
    expect(JSON.parse(deleted.body)).toMatchObject({ method: "DELETE" });
  });

  it("answers Expect: 100-continue only once the destination is allowed and reached", async () => {
    const { allowed, refused, socketPath } = await setup();
    const send = (url: string) =>
      new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const outgoing = request(
          {
            socketPath,
            path: url,
            method: "POST",
            headers: { Expect: "100-continue", "Content-Length": "4" },
            agent: false,
          },
          (response) => {
            response.resume();
            response.on("end", () => resolve({ status: response.statusCode ?? 0, continued }));
          },
        );
        outgoing.on("continue", () => {
          continued = true;
          outgoing.end("body");
        });
        outgoing.on("error", reject);
        outgoing.flushHeaders();
      });
    expect(await send(`http://allowed.test:${allowed.port}/`)).toEqual({ status: 200, continued: true });
    expect(allowed.requests[0]?.body).toBe("body");
    expect(allowed.requests[0]?.headers.expect).toBeUndefined();
    expect(await send(`http://refused.test:${refused.port}/`)).toEqual({ status: 403, continued: false });
  });

  it("refuses a host not on the list with 403 and the contract's reason, without touching it", async () => {
    const { refused, socketPath, proxy, logs } = await setup();
    const response = await proxiedRequest(socketPath, `http://refused.test:${refused.port}/`, {
      method: "POST",
      body: "never sent",
    });
    const reason = "refused.test is not on this agent's network allow list";
    expect(response.status).toBe(403);
    expect(response.headers["x-laoding-refused"]).toBe(reason);
    expect(response.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(response.headers.connection).toBe("close");
    expect(response.body).toBe(reason);
    expect(refused.connections).toBe(0);
    expect(proxy.stats("alpha")).toMatchObject({
      allowed: 0,
      refused: 1,
      lastRefusal: { host: "refused.test", port: refused.port, reason },
    });
    expect(logs.find((line) => line.msg === "egress connection")).toMatchObject({
      host: "refused.test",
      allowed: false,
      reason,
      bytesUp: 0,
      bytesDown: 0,
    });
  });

  it("refuses a listed name that DNS resolves to loopback (rebinding), while the hosts-mapped name reaches it", async () => {
    const { allowed, socketPath } = await setup();
    const rebound = await proxiedRequest(socketPath, `http://rebind.test:${allowed.port}/`);
    expect(rebound.status).toBe(403);
    expect(rebound.body).toBe(
      "rebind.test resolves to 127.0.0.1, an internal address not on this agent's network allow list",
    );
    expect(allowed.connections).toBe(0);
    const mapped = await proxiedRequest(socketPath, `http://allowed.test:${allowed.port}/`);
    expect(mapped.status).toBe(200);
  });

  it("refuses the bot's own endpoint even when its name is allowed", async () => {
    const { admin, socketPath } = await setup();
    const response = await proxiedRequest(socketPath, `http://admin.test:${admin.port}/api/agents`);
    expect(response.status).toBe(403);
    expect(response.headers["x-laoding-refused"]).toBe(
      `admin.test:${admin.port} is one of the bot's own endpoints (admin)`,
    );
    expect(admin.connections).toBe(0);
  });

  it("answers 502 with X-Laoding-Failed for an allowed name that cannot be reached or resolved", async () => {
    const { socketPath, proxy } = await setup();
    const port = await closedPort();
    const unreachable = await proxiedRequest(socketPath, `http://allowed.test:${port}/`);
    expect(unreachable.status).toBe(502);
    expect(unreachable.headers["x-laoding-failed"]).toBe(
      `could not connect to allowed.test:${port} (127.0.0.1: ECONNREFUSED)`,
    );
    expect(unreachable.body).toBe(unreachable.headers["x-laoding-failed"]);
    const unresolved = await proxiedRequest(socketPath, "http://gone.test/");
    expect(unresolved.status).toBe(502);
    expect(unresolved.body).toBe("gone.test could not be resolved (ENOTFOUND)");
    expect(proxy.stats("alpha")).toMatchObject({ failed: 2, refused: 0, allowed: 0 });
  });

  it("answers 400 with a reason for requests a forward proxy cannot serve", async () => {
    const { socketPath, logs } = await setup();
    const originForm = await proxiedRequest(socketPath, "/index.html");
    expect(originForm.status).toBe(400);
    expect(originForm.body).toContain("forward proxy: send absolute-form");
    const https = await proxiedRequest(socketPath, "https://allowed.test/");
    expect(https.status).toBe(400);
    expect(https.body).toContain("use CONNECT");
    expect(logs.filter((line) => line.msg === "egress request rejected")).toHaveLength(2);
  });
});
