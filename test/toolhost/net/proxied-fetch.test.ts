/**
 * Issue 26, items 2 and 4: the child's own fetch through the egress proxy's Unix socket.
 * A stand-in proxy speaking the contract, loopback origins (HTTPS with a self-signed
 * certificate made by openssl), real streams.
 */
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EgressFailedError, EgressRefusedError } from "../../../src/toolhost/net/egress-errors.js";
import { createProxiedFetch, directFetch, type FetchLike } from "../../../src/toolhost/net/proxied-fetch.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { REFUSED_HOST, refusalReason, type StandInProxy, startStandInProxy } from "./stand-in-proxy.js";
import { makeTestCertificate, type Origin, startOrigin, type TestCertificate } from "./test-origin.js";

let proxy: StandInProxy;
let plain: Origin;
let secure: Origin;
let certificate: TestCertificate;
let proxied: FetchLike;
/** Released by the test that reads the first server-sent event. */
let releaseStream: () => void = () => {};
let streamClosed: Promise<void>;

beforeAll(async () => {
  const dir = tempDir("laoding-fetch-", "file");
  proxy = await startStandInProxy(join(dir, "egress.sock"));
  certificate = makeTestCertificate(dir, "secure.test");
  const handler: Parameters<typeof startOrigin>[0] = (request, response) => {
    const url = new URL(request.url ?? "/", "http://origin");
    if (url.pathname === "/echo") {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () =>
        response.end(
          JSON.stringify({
            method: request.method,
            host: request.headers.host,
            type: request.headers["content-type"],
            length: request.headers["content-length"],
            chunked: request.headers["transfer-encoding"],
            authorization: request.headers.authorization,
            body: Buffer.concat(chunks).toString(),
          }),
        ),
      );
      return;
    }
    if (url.pathname === "/events") {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
      streamClosed = new Promise((resolve) => response.once("close", resolve));
      const released = new Promise<void>((resolve) => {
        releaseStream = resolve;
      });
      void released.then(() => response.end("data: second\n\n"));
      return;
    }
    if (url.pathname === "/endless") {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "x");
      const pump = () => {
        while (response.write(chunk));
      };
      response.on("drain", pump);
      pump();
      return;
    }
    if (url.pathname === "/gzip") {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end(gzipSync("unzipped text"));
      return;
    }
    if (url.pathname === "/moved") {
      response.writeHead(302, { location: "/echo" });
      response.end("moving");
      return;
    }
    if (url.pathname === "/elsewhere") {
      response.writeHead(307, { location: `http://other.test:${plain.port}/echo` });
      response.end();
      return;
    }
    response.writeHead(200, { "content-type": "text/plain", "x-seen-url": request.url ?? "" });
    response.end(`hello ${request.headers.host}`);
  };
  plain = await startOrigin(handler);
  secure = await startOrigin(handler, certificate);
  proxied = createProxiedFetch({ socketPath: proxy.socketPath, tls: { ca: certificate.cert } });
});

afterAll(async () => {
  await Promise.all([proxy?.close(), plain?.close(), secure?.close()]);
});

describe("proxied fetch", () => {
  it("sends http:// requests to the proxy in absolute form and returns the answer", async () => {
    const response = await proxied(`http://allowed.test:${plain.port}/page?q=1#fragment`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-seen-url")).toBe("/page?q=1");
    expect(await response.text()).toBe(`hello allowed.test:${plain.port}`);
    expect(response.url).toBe(`http://allowed.test:${plain.port}/page?q=1`);
    expect(proxy.requests).toContain(`GET http://allowed.test:${plain.port}/page?q=1`);
  });

  it("tunnels https:// through CONNECT and checks the origin's certificate", async () => {
    const response = await proxied(`https://secure.test:${secure.port}/page`);
    expect(await response.text()).toBe(`hello secure.test:${secure.port}`);
    expect(proxy.requests).toContain(`CONNECT secure.test:${secure.port}`);

    const untrusting = createProxiedFetch({ socketPath: proxy.socketPath });
    const error = await untrusting(`https://secure.test:${secure.port}/page`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EgressFailedError);
    expect((error as Error).message).toMatch(/^TLS with secure\.test:\d+ failed: /);
  });

  it("sends request bodies with their length and type, streamed bodies chunked", async () => {
    const sent = await proxied(`https://secure.test:${secure.port}/echo`, {
      method: "POST",
      body: JSON.stringify({ a: 1 }),
      headers: { "content-type": "application/json", authorization: "Bearer t" },
    });
    expect(await sent.json()).toMatchObject({
      method: "POST",
      host: `secure.test:${secure.port}`,
      type: "application/json",
      length: "7",
      authorization: "Bearer t",
      body: '{"a":1}',
    });

    const form = await proxied(`http://allowed.test:${plain.port}/echo`, {
      method: "POST",
      body: new URLSearchParams({ x: "y z" }),
    });
    expect(await form.json()).toMatchObject({ type: "application/x-www-form-urlencoded;charset=UTF-8", body: "x=y+z" });

    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("part one, "));
        controller.enqueue(new TextEncoder().encode("part two"));
        controller.close();
      },
    });
    const streamed = await proxied(`http://allowed.test:${plain.port}/echo`, {
      method: "PUT",
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(await streamed.json()).toMatchObject({ method: "PUT", chunked: "chunked", body: "part one, part two" });
  });

  it("streams a response: the first event is read before the server has finished", async () => {
    const response = await proxied(`https://secure.test:${secure.port}/events`);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    releaseStream();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    expect(rest).toBe("data: second\n\n");
  });

  it("aborts with the signal: before the answer, and while the body streams (closing the connection)", async () => {
    const early = new AbortController();
    early.abort();
    await expect(proxied(`http://allowed.test:${plain.port}/page`, { signal: early.signal })).rejects.toMatchObject({
      name: "AbortError",
    });

    const controller = new AbortController();
    const response = await proxied(`https://secure.test:${secure.port}/events`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
    await streamClosed;
    releaseStream();
  });

  it("stops downloading when the body is cancelled", async () => {
    const response = await proxied(`http://allowed.test:${plain.port}/endless`);
    const reader = response.body!.getReader();
    await reader.read();
    const before = proxy.openConnections();
    await reader.cancel();
    await vi.waitFor(() => expect(proxy.openConnections()).toBeLessThan(before));
  });

  it("turns the proxy's refusal into EgressRefusedError, for http and https", async () => {
    for (const url of [`http://${REFUSED_HOST}:${plain.port}/`, `https://${REFUSED_HOST}/`]) {
      const error = await proxied(url).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EgressRefusedError);
      expect(error).toMatchObject({ reason: refusalReason(REFUSED_HOST) });
    }
  });

  it("turns an unreachable host and a missing proxy into EgressFailedError", async () => {
    const closed = await startOrigin(() => {});
    await closed.close();
    const unreachable = await proxied(`https://gone.test:${closed.port}/`).catch((caught: unknown) => caught);
    expect(unreachable).toBeInstanceOf(EgressFailedError);
    expect((unreachable as Error).message).toBe(`gone.test:${closed.port} could not be reached: ECONNREFUSED`);

    const noProxy = createProxiedFetch({ socketPath: join(tempDir(), "none.sock") });
    for (const url of [`http://allowed.test:${plain.port}/`, `https://secure.test:${secure.port}/`]) {
      const error = await noProxy(url).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EgressFailedError);
      expect((error as Error).message).toMatch(/^the egress proxy cannot be reached \(ENOENT\)/);
    }
  });

  it("follows redirects as fetch does, or hands them back with redirect: manual", async () => {
    const followed = await proxied(`http://allowed.test:${plain.port}/moved`, { method: "POST", body: "x" });
    expect(await followed.json()).toMatchObject({ method: "GET", body: "" });
    expect(followed.url).toBe(`http://allowed.test:${plain.port}/echo`);

    const manual = await proxied(`http://allowed.test:${plain.port}/moved`, { redirect: "manual" });
    expect(manual.status).toBe(302);
    expect(manual.headers.get("location")).toBe("/echo");
    await manual.body?.cancel();

    // A 307 keeps the method and body; crossing origins drops the credentials.
    const crossed = await proxied(`http://allowed.test:${plain.port}/elsewhere`, {
      method: "POST",
      body: "kept",
      headers: { authorization: "Bearer secret" },
    });
    expect(await crossed.json()).toEqual({
      method: "POST",
      host: `other.test:${plain.port}`,
      type: "text/plain;charset=UTF-8",
      length: "4",
      body: "kept",
    });
  });

  it("decompresses a gzip body", async () => {
    const response = await proxied(`http://allowed.test:${plain.port}/gzip`);
    expect(await response.text()).toBe("unzipped text");
  });
});

describe("direct fetch", () => {
  it("is fetch, with an unreachable host as EgressFailedError", async () => {
    const response = await directFetch(`http://127.0.0.1:${plain.port}/page`);
    expect(await response.text()).toBe(`hello 127.0.0.1:${plain.port}`);

    const closed = await startOrigin(() => {});
    await closed.close();
    const error = await directFetch(`http://127.0.0.1:${closed.port}/`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EgressFailedError);
    expect((error as Error).message).toMatch(/^127\.0\.0\.1:\d+ could not be reached: .*ECONNREFUSED/);
  });
});
