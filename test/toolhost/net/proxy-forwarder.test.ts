/**
 * Issue 26, item 1: the child's forwarder from 127.0.0.1:<port> to the egress proxy's
 * Unix socket. Real sockets both sides; curl run with proxyEnvironment goes through it.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { callProxyUrl, proxyEnvironment } from "../../../src/toolhost/net/proxy-environment.js";
import {
  callTagIn,
  type ProxyForwarder,
  refusalIn,
  startProxyForwarder,
} from "../../../src/toolhost/net/proxy-forwarder.js";
import { silentLogger } from "../../helpers/toolhost.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { REFUSED_HOST, refusalReason, startStandInProxy } from "./stand-in-proxy.js";
import { startOrigin } from "./test-origin.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function forwarderTo(socketPath: string, options: { now?: () => number; maxRefusals?: number } = {}) {
  const forwarder = await startProxyForwarder({ socketPath, logger: silentLogger, ...options });
  cleanups.push(() => forwarder.close());
  return forwarder;
}

/** A Unix server whose every connection runs `onConnection`; it counts the open ones. */
async function unixServer(onConnection: (socket: Socket) => void) {
  const socketPath = join(tempDir(), "egress.sock");
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { socketPath, open };
}

function dial(forwarder: ProxyForwarder): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port: forwarder.port }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Everything `socket` receives until it ends. */
function readAll(socket: Socket): Promise<Buffer> {
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => socket.once("close", () => resolve(Buffer.concat(chunks))));
}

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describe("proxy forwarder", () => {
  it("listens on loopback and passes bytes both ways unchanged", async () => {
    const upload = randomBytes(3 * 1024 * 1024);
    const download = randomBytes(2 * 1024 * 1024);
    let received: Promise<Buffer> | undefined;
    const proxy = await unixServer((socket) => {
      received = readAll(socket);
      // The proxy speaks first here: the forwarder must not wait for the client to.
      socket.end(download);
    });
    const forwarder = await forwarderTo(proxy.socketPath);
    expect(forwarder.url).toBe(`http://127.0.0.1:${forwarder.port}`);

    const client = await dial(forwarder);
    const answer = readAll(client);
    client.end(upload);
    expect(sha(await answer)).toBe(sha(download));
    await vi.waitFor(() => expect(received).toBeDefined());
    expect(sha(await received!)).toBe(sha(upload));
  });

  it("records the proxy's refusals with their reasons, and only refusals", async () => {
    let now = 1_000;
    const proxy = await startStandInProxy(join(tempDir(), "egress.sock"));
    cleanups.push(() => proxy.close());
    const origin = await startOrigin((_request, response) => response.end("fine"));
    cleanups.push(() => origin.close());
    const forwarder = await forwarderTo(proxy.socketPath, { now: () => now });

    const refused = await dial(forwarder);
    const refusedAnswer = readAll(refused);
    refused.write(`CONNECT ${REFUSED_HOST}:443 HTTP/1.1\r\nHost: ${REFUSED_HOST}:443\r\n\r\n`);
    expect((await refusedAnswer).toString()).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(forwarder.refusalsSince(1_000)).toEqual([refusalReason(REFUSED_HOST)]);
    expect(forwarder.refusalsSince(1_001)).toEqual([]);

    now = 2_000;
    const allowed = await dial(forwarder);
    const allowedAnswer = readAll(allowed);
    allowed.end(`GET http://allowed.test:${origin.port}/ HTTP/1.1\r\nHost: allowed.test:${origin.port}\r\n\r\n`);
    expect((await allowedAnswer).toString()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*fine$/);
    expect(forwarder.refusalsSince(2_000)).toEqual([]);
  });

  it("finds a refusal whose head arrives in pieces, ignores a 403 without the header, and keeps a bounded ring", async () => {
    let connections = 0;
    const proxy = await unixServer((socket) => {
      connections += 1;
      const n = connections;
      if (n === 1) {
        // Split inside the header name: the forwarder must join the pieces.
        socket.write("HTTP/1.1 403 Forbidden\r\nX-Laoding-Ref");
        setTimeout(() => socket.end(`used: host-${n} is not on this agent's network allow list\r\n\r\n`), 20);
      } else if (n === 2) {
        socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
      } else {
        socket.end(`HTTP/1.1 403 Forbidden\r\nx-laoding-refused: host-${n} refused\r\n\r\n`);
      }
    });
    const forwarder = await forwarderTo(proxy.socketPath, { now: () => 5, maxRefusals: 2 });
    for (let index = 0; index < 4; index += 1) await readAll(await dial(forwarder));
    // Connections 1, 3 and 4 were refusals; the ring of two keeps the last two.
    expect(forwarder.refusalsSince(0)).toEqual(["host-3 refused", "host-4 refused"]);
  });

  it("frees the proxy's connection when the client goes, and the client's when the proxy goes", async () => {
    const proxy = await unixServer(() => {});
    const forwarder = await forwarderTo(proxy.socketPath);
    const client = await dial(forwarder);
    await vi.waitFor(() => expect(proxy.open.size).toBe(1));
    client.destroy();
    await vi.waitFor(() => expect(proxy.open.size).toBe(0));

    const second = await dial(forwarder);
    const closed = new Promise((resolve) => second.once("close", resolve));
    await vi.waitFor(() => expect(proxy.open.size).toBe(1));
    for (const socket of proxy.open) socket.destroy();
    await closed;
  });

  it("closes a client whose proxy socket is missing, and keeps serving", async () => {
    const socketPath = join(tempDir(), "missing.sock");
    const forwarder = await forwarderTo(socketPath);
    const client = await dial(forwarder);
    expect((await readAll(client)).length).toBe(0);

    await startStandInProxy(socketPath).then((proxy) => cleanups.push(() => proxy.close()));
    const again = await dial(forwarder);
    const answer = readAll(again);
    again.write(`CONNECT ${REFUSED_HOST}:443 HTTP/1.1\r\n\r\n`);
    expect((await answer).toString()).toContain("X-Laoding-Refused");
  });

  it("close() ends every open connection and stops listening", async () => {
    const proxy = await unixServer(() => {});
    const forwarder = await startProxyForwarder({ socketPath: proxy.socketPath, logger: silentLogger });
    const client = await dial(forwarder);
    const closed = new Promise((resolve) => client.once("close", resolve));
    await forwarder.close();
    await forwarder.close();
    await closed;
    await expect(dial(forwarder)).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("carries curl's http and https traffic with proxyEnvironment, and curl's refusal is on record", async () => {
    const proxy = await startStandInProxy(join(tempDir(), "egress.sock"));
    cleanups.push(() => proxy.close());
    const origin = await startOrigin((request, response) => response.end(`hello from ${request.url}`));
    cleanups.push(() => origin.close());
    const forwarder = await forwarderTo(proxy.socketPath);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...proxyEnvironment(forwarder.url) };
    const curl = promisify(execFile);

    const { stdout } = await curl("curl", ["-sS", `http://allowed.test:${origin.port}/page`], { env });
    expect(stdout).toBe("hello from /page");
    expect(proxy.requests).toContain(`GET http://allowed.test:${origin.port}/page`);

    const started = Date.now();
    const refused = await curl("curl", ["-sS", `https://${REFUSED_HOST}/`], { env }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 56 });
    expect(forwarder.refusalsSince(started)).toEqual([refusalReason(REFUSED_HOST)]);
  });

  it("tells one call's refusals from another's by the proxy user its URL names, for http and https", async () => {
    const proxy = await startStandInProxy(join(tempDir(), "egress.sock"));
    cleanups.push(() => proxy.close());
    const forwarder = await forwarderTo(proxy.socketPath);
    const curl = promisify(execFile);
    const envFor = (tag: string) => ({
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...proxyEnvironment(callProxyUrl(forwarder.url, tag)),
    });
    const started = Date.now();
    await curl("curl", ["-sS", `https://${REFUSED_HOST}/`], { env: envFor("call-one") }).catch(() => undefined);
    await curl("curl", ["-sS", `http://${REFUSED_HOST}/plain`], { env: envFor("call-two") }).catch(() => undefined);
    expect(forwarder.refusalsSince(started, "call-one")).toEqual([refusalReason(REFUSED_HOST)]);
    expect(forwarder.refusalsSince(started, "call-two")).toEqual([refusalReason(REFUSED_HOST)]);
    expect(forwarder.refusalsSince(started, "call-three")).toEqual([]);
    // Untagged asks see them all.
    expect(forwarder.refusalsSince(started)).toEqual([refusalReason(REFUSED_HOST)]);
  });
});

describe("callTagIn", () => {
  it("reads the proxy user of a Basic Proxy-Authorization, and nothing else", () => {
    const head = (value: string) => `CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nProxy-Authorization: ${value}`;
    expect(callTagIn(head(`Basic ${Buffer.from("0f3c-11aa:x").toString("base64")}`))).toBe("0f3c-11aa");
    expect(callTagIn(head(`basic ${Buffer.from("tag").toString("base64")}`))).toBe("tag");
    expect(callTagIn(head("Bearer abc"))).toBeUndefined();
    expect(callTagIn(head(`Basic ${Buffer.from("bad tag!:x").toString("base64")}`))).toBeUndefined();
    expect(callTagIn("GET http://a.test/ HTTP/1.1\r\nHost: a.test")).toBeUndefined();
  });
});

describe("refusalIn", () => {
  it("reads the reason of a 403 refusal head only", () => {
    expect(refusalIn("HTTP/1.1 403 Forbidden\r\nX-Laoding-Refused: a.test is not allowed")).toBe(
      "a.test is not allowed",
    );
    expect(refusalIn("HTTP/1.0 403 Forbidden\r\nx-laoding-refused:b")).toBe("b");
    expect(refusalIn("HTTP/1.1 502 Bad Gateway\r\nX-Laoding-Refused: c")).toBeUndefined();
    expect(refusalIn("HTTP/1.1 403 Forbidden\r\nX-Laoding-Refused:   ")).toBeUndefined();
    expect(refusalIn("HTTP/1.1 200 Connection established")).toBeUndefined();
  });
});
