/**
 * The webhook door's size check (issue 32, "sizes at every door"): the platforms' SDKs
 * read a whole body before checking its signature, so an oversized or undeclared body is
 * refused by the real server before its handler (and so the SDK) sees a byte of it.
 */
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startWebhookServer, type WebhookServer } from "../../src/channels/webhook-server.js";

let server: WebhookServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends a POST with a body of `bytes` zero bytes, declared (Content-Length) or chunked. */
function post(port: number, bytes: number, chunked: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/hook",
        headers: chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(bytes) },
      },
      (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    // The server may close before the whole body is sent: that is the point.
    request.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
    );
    request.end(Buffer.alloc(bytes));
  });
}

describe("webhook bodies", () => {
  it("a body over the limit gets 413 and a body without a declared length 411, unread by the handler; one within it is handled", async () => {
    const seen: number[] = [];
    server = await startWebhookServer({
      host: "127.0.0.1",
      port: 0,
      maxBodyBytes: 64 * 1024,
      onError: () => undefined,
      handle: async (request, response) => {
        let bytes = 0;
        for await (const chunk of request) bytes += (chunk as Buffer).length;
        seen.push(bytes);
        response.end("ok");
        return true;
      },
    });
    expect(await post(server.port, 2 * 1024 * 1024, false)).toEqual({
      status: 413,
      body: `body of ${2 * 1024 * 1024} bytes; at most ${64 * 1024}`,
    });
    expect(await post(server.port, 1024, true)).toMatchObject({ status: 411 });
    expect(seen).toEqual([]);
    expect(await post(server.port, 1024, false)).toEqual({ status: 200, body: "ok" });
    expect(seen).toEqual([1024]);
  });
});
