/**
 * A small HTTP server for platform webhooks (Telegram, Feishu). A handler answers its
 * own requests; anything else gets 404. Closing drops idle keep-alive connections.
 *
 * The platforms' SDKs read a whole body into memory before they check its signature, so
 * the size is checked here first: a body must declare its length (both platforms do) and
 * stay under WEBHOOK_BODY_MAX_BYTES, else 411/413 before a byte of it is read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type WebhookServer = { port: number; close(): Promise<void> };

/** Far above any update either platform sends (a Telegram message is at most 4096 characters; a Feishu event tens of KiB). */
export const WEBHOOK_BODY_MAX_BYTES = 4 * 1024 * 1024;

/** Why a request's body is refused unread, or undefined when its declared size is fine. */
function bodySizeProblem(request: IncomingMessage, maxBytes: number): { status: number; text: string } | undefined {
  if (request.method === "GET" || request.method === "HEAD") return undefined;
  const declared = request.headers["content-length"];
  if (declared === undefined) return { status: 411, text: "a body must declare its Content-Length" };
  const bytes = Number(declared);
  if (!Number.isSafeInteger(bytes) || bytes < 0) return { status: 400, text: "bad Content-Length" };
  if (bytes > maxBytes) return { status: 413, text: `body of ${bytes} bytes; at most ${maxBytes}` };
  return undefined;
}

export async function startWebhookServer(options: {
  host: string;
  port: number;
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<boolean>;
  onError: (error: unknown) => void;
  /** Largest body accepted (tests); default WEBHOOK_BODY_MAX_BYTES. */
  maxBodyBytes?: number;
}): Promise<WebhookServer> {
  const server = createServer((request, response) => {
    const refused = bodySizeProblem(request, options.maxBodyBytes ?? WEBHOOK_BODY_MAX_BYTES);
    if (refused) {
      // Closing the connection: the rest of an oversized body is never read.
      response.writeHead(refused.status, { "content-type": "text/plain", connection: "close" }).end(refused.text);
      return;
    }
    options
      .handle(request, response)
      .then((handled) => {
        if (!handled && !response.headersSent)
          response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      })
      .catch((error: unknown) => {
        options.onError(error);
        // 503: nothing was stored (the database does not answer, say); the platform delivers it again.
        if (!response.headersSent)
          response
            .writeHead(503, { "content-type": "text/plain", "retry-after": "5" })
            .end("not taken in; deliver again");
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
