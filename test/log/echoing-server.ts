/**
 * A loopback server that fails every call and echoes the request back in its error, as
 * real servers and proxies sometimes do: the URL (a Telegram token in the path), the
 * headers (`Authorization: Bearer ...`) and the body (Feishu's `app_secret`). It answers
 * in each platform's own error shape so the SDKs parse it as they would the real thing.
 * Also a closed port, for "every endpoint unreachable".
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** The tenant token it hands out: a secret nobody configured, which SDK errors then carry as `Bearer`. */
export const ECHO_TENANT_TOKEN = "t-tenantSeCrEt0a1b2c3d4e5f";

export type EchoingServer = { url: string; close(): Promise<void> };

/** `feishuTokenOk`: Feishu's token call succeeds (later calls then fail carrying the token); else it fails echoing the app secret. */
export async function startEchoingServer(options: { feishuTokenOk?: boolean } = {}): Promise<EchoingServer> {
  const server = createServer((request, response) => {
    void (async () => {
      const echo = await describeRequest(request);
      const reply = (status: number, body: unknown) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      const path = new URL(request.url ?? "/", "http://echo").pathname;
      if (path.startsWith("/bot"))
        return reply(401, { ok: false, error_code: 401, description: `Unauthorized: ${echo}` });
      if (path === "/open-apis/auth/v3/tenant_access_token/internal") {
        return options.feishuTokenOk
          ? reply(200, { code: 0, msg: "ok", tenant_access_token: ECHO_TENANT_TOKEN, expire: 7200 })
          : reply(400, { code: 10014, msg: `app secret invalid: ${echo}` });
      }
      if (path.startsWith("/open-apis/")) return reply(500, { code: 99991400, msg: `internal error for ${echo}` });
      if (path.endsWith("/chat/completions"))
        return reply(500, { error: { message: `upstream failed for ${echo}`, type: "server_error" } });
      return reply(500, { error: echo });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function describeRequest(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  // The credential first: clients cut long error texts, and the point is what survives the cut.
  const authorization = request.headers.authorization ? `(authorization: ${request.headers.authorization}) ` : "";
  return `${request.method} ${request.url} ${authorization}body=${Buffer.concat(chunks).toString("utf8")} headers=${JSON.stringify(request.headers)}`;
}

/** A loopback port nothing listens on: connections are refused at once. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
