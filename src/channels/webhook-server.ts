/**
 * A small HTTP server for platform webhooks (Telegram, Feishu). A handler answers its
 * own requests; anything else gets 404. Closing drops idle keep-alive connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type WebhookServer = { port: number; close(): Promise<void> };

export async function startWebhookServer(options: {
  host: string;
  port: number;
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<boolean>;
  onError: (error: unknown) => void;
}): Promise<WebhookServer> {
  const server = createServer((request, response) => {
    options
      .handle(request, response)
      .then((handled) => {
        if (!handled && !response.headersSent) response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      })
      .catch((error: unknown) => {
        options.onError(error);
        if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" }).end("error");
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
