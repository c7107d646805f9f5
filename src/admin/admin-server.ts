/**
 * The admin HTTP server on node:http. Why not a framework: ten JSON routes, one auth rule
 * and one body rule fit in this file, and node:http lets us own exactly the parts that
 * matter here (constant-time token check before any routing, a hard body limit while
 * reading, no CORS at all, no token in any log line) without a dependency to audit.
 *
 * Invariants:
 * - every request but GET /v1/health needs `Authorization: Bearer <ADMIN_TOKEN>`,
 *   compared in constant time; the server refuses to start without a token;
 * - answers are JSON envelopes `{ ok: true, data }` / `{ ok: false, error: { code, message } }`;
 * - same origin only: no Access-Control-* header is ever sent, so a page from elsewhere
 *   cannot call it; `/` and `/assets/*` serve the admin page (page-assets.ts) without a
 *   token: its files hold no data, and every API call the page makes carries the token;
 * - one log line per request: method, path (no query), status, duration. Never headers.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../log/logger.js";
import { AdminError } from "./admin-errors.js";
import type { AdminRoute, RouteRequest } from "./admin-routes.js";
import type { PageAnswer, PageAssets } from "./page-assets.js";

export type AdminServerOptions = {
  host: string;
  port: number;
  token: string | undefined;
  bodyMaxBytes: number;
  routes: AdminRoute[];
  /** The admin page's files; without it only the API is served. */
  page?: PageAssets;
  logger: Logger;
  clock?: { now(): number };
};

export type AdminServer = { server: Server; url: string; close(): Promise<void> };

export class AdminStartError extends Error {
  override readonly name = "AdminStartError";
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The admin API never runs without a token, on loopback as anywhere (DECISIONS.md). */
export function requireAdminToken(token: string | undefined): string {
  if (!token) {
    throw new AdminStartError(
      "ADMIN_TOKEN is not set: the admin API never runs without a token. Set ADMIN_TOKEN to a random string of at least 16 characters (openssl rand -hex 24) in configs/env, then start again",
    );
  }
  return token;
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const token = requireAdminToken(options.token);
  const clock = options.clock ?? { now: () => Date.now() };
  const expected = digest(token);
  const authorized = (request: IncomingMessage) => {
    const header = request.headers.authorization ?? "";
    const match = /^Bearer +(.+)$/i.exec(header);
    // Both sides hashed to the same length first: timingSafeEqual then leaks nothing, not even the length.
    return match !== null && timingSafeEqual(digest(match[1] as string), expected);
  };

  const server = createServer((request, response) => {
    const started = clock.now();
    const url = new URL(request.url ?? "/", "http://admin.invalid");
    const traceId = randomUUID();
    // "close", not "finish": a request the client gave up on is logged too.
    response.once("close", () => {
      options.logger.info(
        {
          traceId,
          method: request.method,
          path: url.pathname,
          status: response.statusCode,
          durationMs: clock.now() - started,
        },
        "admin request",
      );
    });
    void handle(request, response, url, authorized(request)).catch((error: unknown) => {
      options.logger.error({ err: error, traceId, path: url.pathname }, "admin request failed");
      if (!response.headersSent)
        send(response, 500, {
          ok: false,
          error: { code: "INTERNAL", message: "internal error; the server log has the details" },
        });
      else response.destroy();
    });
  });

  const handle = async (request: IncomingMessage, response: ServerResponse, url: URL, isAuthorized: boolean) => {
    const method = request.method ?? "GET";
    if (options.page && (method === "GET" || method === "HEAD") && !url.pathname.startsWith("/v1/")) {
      const answer = await options.page(url.pathname);
      if (answer) return sendPage(response, answer, method === "HEAD");
    }
    try {
      const segments = pathSegments(url.pathname);
      const matching = options.routes.flatMap((route) => {
        const params = matchPath(route.path, segments);
        return params ? [{ route, params }] : [];
      });
      const found = matching.find((candidate) => candidate.route.method === method);
      if (!isAuthorized && !found?.route.public)
        throw new AdminError("UNAUTHORIZED", "send Authorization: Bearer <ADMIN_TOKEN>");
      if (!found) {
        if (matching.length > 0) {
          response.setHeader("Allow", [...new Set(matching.map((candidate) => candidate.route.method))].join(", "));
          throw new AdminError(
            "METHOD_NOT_ALLOWED",
            `${method} is not allowed on ${url.pathname}; allowed: ${matching.map((candidate) => candidate.route.method).join(", ")}`,
          );
        }
        throw new AdminError("NOT_FOUND", `no route ${method} ${url.pathname}; docs/admin-api.md lists them`);
      }
      const body = found.route.body ? await readJsonBody(request, options.bodyMaxBytes) : undefined;
      const routeRequest: RouteRequest = {
        params: found.params,
        query: url.searchParams,
        body,
        authorized: isAuthorized,
      };
      const data = await found.route.handle(routeRequest);
      send(response, found.route.status ?? 200, { ok: true, data });
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      // A refused body may still be arriving: close the connection instead of reading it.
      if (error.code === "BODY_TOO_LARGE") response.setHeader("Connection", "close");
      if (error.code === "UNAUTHORIZED") response.setHeader("WWW-Authenticate", 'Bearer realm="laoding-admin"');
      send(response, error.status, { ok: false, error: { code: error.code, message: error.message } });
    }
  };

  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) =>
      reject(
        new AdminStartError(
          `the admin API cannot listen on ${options.host}:${options.port} (${error.code ?? error.message}): choose another ADMIN_PORT or ADMIN_HOST, or stop what uses it`,
          { cause: error },
        ),
      );
    server.once("error", refuse);
    server.listen(options.port, options.host, () => {
      server.off("error", refuse);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

function send(response: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, {
    "Content-Type": JSON_TYPE,
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  response.end(text);
}

/**
 * The page may only load itself: scripts and styles from this origin, calls to this origin,
 * no frames (clickjacking), no referrer leaving the page.
 */
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function sendPage(response: ServerResponse, answer: PageAnswer, headOnly: boolean): void {
  response.writeHead(answer.status, {
    "Content-Type": answer.type,
    "Content-Length": Buffer.byteLength(answer.body),
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": PAGE_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
  });
  response.end(headOnly ? undefined : answer.body);
}

/** Raw segments, each decoded once; a segment that does not decode is refused. */
function pathSegments(pathname: string): string[] {
  return pathname
    .split("/")
    .slice(1)
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        throw new AdminError("INVALID_REQUEST", `the path segment "${segment}" is not valid percent-encoding`);
      }
    });
}

/** `/v1/agents/:id` against decoded segments: the parameters, or undefined when it does not match. */
function matchPath(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split("/").slice(1);
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of parts.entries()) {
    const segment = segments[index] as string;
    if (part.startsWith(":")) params[part.slice(1)] = segment;
    else if (part !== segment) return undefined;
  }
  return params;
}

async function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type))
    throw new AdminError(
      "UNSUPPORTED_MEDIA_TYPE",
      `send the body as Content-Type: application/json (got "${type || "none"}")`,
    );
  const declared = Number(request.headers["content-length"] ?? "0");
  if (declared > maxBytes)
    throw new AdminError(
      "BODY_TOO_LARGE",
      `the body is ${declared} bytes; the limit is ${maxBytes} (ADMIN_BODY_MAX_BYTES)`,
    );
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > maxBytes)
      throw new AdminError("BODY_TOO_LARGE", `the body is over the limit of ${maxBytes} bytes (ADMIN_BODY_MAX_BYTES)`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    throw new AdminError("INVALID_BODY", `the body is not valid JSON: ${(error as Error).message}`);
  }
}
