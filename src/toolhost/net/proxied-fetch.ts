/**
 * fetch for the child itself (web.fetch, MCP's Streamable HTTP transport), through the
 * egress proxy's Unix socket directly: no loopback hop through the forwarder, no proxy
 * environment. http:// goes as an absolute-form request (`GET http://host/path`);
 * https:// opens a `CONNECT host:port` tunnel and speaks TLS to the origin inside it, so
 * the proxy sees the host name and never the content.
 *
 * It is fetch-shaped (the MCP SDK's FetchLike): request bodies of any fetch kind,
 * response bodies that stream (SSE), `init.signal` honoured at every step, redirects as
 * `init.redirect` says. The proxy's own answers become errors: a refusal is an
 * EgressRefusedError with the proxy's reason, an unreachable host (and every transport
 * failure: the proxy's socket gone, a TLS handshake refused, a reset) an
 * EgressFailedError. directFetch, for agents with the host's network, gives the same
 * errors, so callers never ask which one they hold.
 */
import { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest } from "node:http";
import { createConnection, isIP, type Socket } from "node:net";
import { Readable } from "node:stream";
import { connect as tlsConnect, type SecureContextOptions } from "node:tls";
import { EgressFailedError, EgressRefusedError, FAILED_HEADER, REFUSED_HEADER } from "./egress-errors.js";
import { toWebResponse } from "./web-response.js";

/** The MCP SDK's FetchLike: what the Streamable HTTP transport and web.fetch are given. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export type ProxiedFetchOptions = {
  /** The egress proxy's Unix socket. */
  socketPath: string;
  /** TLS trust beyond Node's bundled roots (tests: a self-signed CA). */
  tls?: { ca?: SecureContextOptions["ca"] };
};

/** As fetch: redirects followed at most this many times with `redirect: "follow"`. */
const MAX_REDIRECTS = 20;
/** The statuses that redirect (web.fetch follows them itself). */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

type Outgoing = { url: URL; method: string; headers: Headers; body: Buffer | Readable | undefined };

export function createProxiedFetch(options: ProxiedFetchOptions): FetchLike {
  return async (input, init = {}) => {
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new TypeError(`fetch through the egress proxy supports http and https only, not ${url.protocol}`);
    url.hash = "";
    const outgoing: Outgoing = {
      url,
      method: (init.method ?? "GET").toUpperCase(),
      headers: new Headers(init.headers),
      body: undefined,
    };
    outgoing.body = await requestBody(init, outgoing);
    if (!outgoing.headers.has("accept")) outgoing.headers.set("accept", "*/*");
    if (!outgoing.headers.has("accept-encoding")) outgoing.headers.set("accept-encoding", "gzip, deflate, br");
    const mode = init.redirect ?? "follow";
    for (let redirects = 0; ; redirects += 1) {
      const response = await exchange(options, outgoing, signal);
      const location = response.headers.get("location");
      if (!REDIRECT_STATUSES.has(response.status) || location === null || mode === "manual") return response;
      await response.body?.cancel();
      if (mode === "error") throw new TypeError(`${outgoing.url.href} redirected, and redirect is "error"`);
      if (redirects >= MAX_REDIRECTS) throw new TypeError(`more than ${MAX_REDIRECTS} redirects from ${url.href}`);
      followRedirect(outgoing, response.status, location);
    }
  };
}

/** fetch as it is, for an agent with the host's network; failures to connect become EgressFailedError. */
export const directFetch: FetchLike = async (url, init) => {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (init?.signal?.aborted || !(error instanceof TypeError) || error.cause === undefined) throw error;
    throw new EgressFailedError(`${hostOf(url)} could not be reached: ${describeCause(error.cause)}`, String(url), {
      cause: error,
    });
  }
};

/** The request body as bytes (with a Content-Length) or, for a stream, as a stream (chunked). */
async function requestBody(init: RequestInit, outgoing: Outgoing): Promise<Buffer | Readable | undefined> {
  if (init.body === undefined || init.body === null) return undefined;
  // A Request normalises every body kind fetch accepts and supplies its Content-Type.
  const normalised = new Request("http://body.invalid/", { method: "POST", body: init.body, duplex: "half" });
  const type = normalised.headers.get("content-type");
  if (type !== null && !outgoing.headers.has("content-type")) outgoing.headers.set("content-type", type);
  if (init.body instanceof ReadableStream) return Readable.fromWeb(init.body as never);
  return Buffer.from(await normalised.arrayBuffer());
}

/** Moves `outgoing` to the redirect's target, with fetch's rules for methods, bodies and credentials. */
function followRedirect(outgoing: Outgoing, status: number, location: string): void {
  const next = new URL(location, outgoing.url);
  if (next.protocol !== "http:" && next.protocol !== "https:")
    throw new TypeError(`${outgoing.url.href} redirected to ${next.protocol}, which is not http or https`);
  next.hash = "";
  const becomesGet =
    (status === 303 && outgoing.method !== "GET" && outgoing.method !== "HEAD") ||
    ((status === 301 || status === 302) && outgoing.method === "POST");
  if (becomesGet) {
    outgoing.method = "GET";
    outgoing.body = undefined;
    for (const name of ["content-type", "content-length", "content-encoding", "content-language"])
      outgoing.headers.delete(name);
  } else if (outgoing.body instanceof Readable) {
    throw new TypeError(
      `${outgoing.url.href} redirected a request whose body was a stream, which cannot be sent again`,
    );
  }
  if (next.origin !== outgoing.url.origin) outgoing.headers.delete("authorization");
  outgoing.url = next;
}

/** One request and its answer's head: through a CONNECT tunnel for https, in absolute form for http. */
async function exchange(options: ProxiedFetchOptions, outgoing: Outgoing, signal?: AbortSignal): Promise<Response> {
  const { url } = outgoing;
  const sockets: Socket[] = [];
  let request: ClientRequest | undefined;
  // Whatever fails after this reports the signal's reason (the error handlers look at signal.aborted).
  const destroyAll = () => {
    request?.destroy();
    for (const socket of sockets) socket.destroy();
  };
  const onAbort = () => destroyAll();
  signal?.addEventListener("abort", onAbort, { once: true });
  const release = () => signal?.removeEventListener("abort", onAbort);
  try {
    const secure = url.protocol === "https:";
    const socket = secure
      ? await openTlsTunnel(options, url, sockets, signal)
      : track(sockets, createConnection({ path: options.socketPath }));
    signal?.throwIfAborted();
    const headers: OutgoingHttpHeaders = Object.fromEntries(outgoing.headers);
    headers.host = url.host;
    if (Buffer.isBuffer(outgoing.body)) headers["content-length"] = String(outgoing.body.length);
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      request = httpRequest({
        createConnection: () => socket,
        method: outgoing.method,
        // The proxy wants the absolute form; inside a tunnel the origin wants the usual path.
        path: secure ? `${url.pathname}${url.search}` : url.href,
        headers,
      });
      request.once("response", resolve);
      request.on("error", (error) =>
        reject(signal?.aborted ? abortReason(signal) : transportError(error, options, url)),
      );
      if (outgoing.body instanceof Readable) {
        outgoing.body.once("error", (error) => request?.destroy(error));
        outgoing.body.pipe(request);
      } else request.end(outgoing.body);
    });
    const problem = secure ? undefined : proxyProblem(answer, url);
    if (problem) {
      answer.destroy();
      throw problem;
    }
    const response = toWebResponse(answer, {
      url: url.href,
      method: outgoing.method,
      bodyError: (error) =>
        signal?.aborted
          ? abortReason(signal)
          : new EgressFailedError(
              `the connection to ${url.host} was cut before the whole answer arrived (${describeCause(error)})`,
              url.href,
              { cause: error },
            ),
    });
    // The abort listener stays while the body streams; it goes when the connection does.
    if (socket.destroyed) release();
    else socket.once("close", release);
    return response;
  } catch (error) {
    release();
    destroyAll();
    throw error;
  }
}

/** Opens `CONNECT host:port` on the proxy's socket and a TLS session to the origin inside it. */
async function openTlsTunnel(
  options: ProxiedFetchOptions,
  url: URL,
  sockets: Socket[],
  signal?: AbortSignal,
): Promise<Socket> {
  const authority = `${url.hostname}:${url.port || "443"}`;
  const tunnel = await new Promise<Socket>((resolve, reject) => {
    const connect = httpRequest({
      createConnection: () => track(sockets, createConnection({ path: options.socketPath })),
      method: "CONNECT",
      path: authority,
      headers: { host: authority },
    });
    connect.once("connect", (answer: IncomingMessage, socket: Socket, head: Buffer) => {
      track(sockets, socket);
      if (answer.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
        return;
      }
      socket.destroy();
      reject(
        proxyProblem(answer, url) ??
          new EgressFailedError(`the egress proxy answered CONNECT ${authority} with ${answer.statusCode}`, url.href),
      );
    });
    connect.on("error", (error) => reject(signal?.aborted ? abortReason(signal) : transportError(error, options, url)));
    connect.end();
  });
  signal?.throwIfAborted();
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  const secure = track(
    sockets,
    tlsConnect({
      socket: tunnel,
      // SNI takes names only (RFC 6066); an IP literal is checked against the certificate's IP entries.
      ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
      host: hostname,
      ALPNProtocols: ["http/1.1"],
      ...(options.tls?.ca !== undefined ? { ca: options.tls.ca } : {}),
    }),
  );
  await new Promise<void>((resolve, reject) => {
    secure.once("secureConnect", resolve);
    secure.once("error", (error) =>
      reject(
        signal?.aborted
          ? abortReason(signal)
          : new EgressFailedError(`TLS with ${url.host} failed: ${describeCause(error)}`, url.href, { cause: error }),
      ),
    );
  });
  return secure;
}

/** The proxy's refusal (403 + X-Laoding-Refused) or failure (502 + X-Laoding-Failed) as an error; else undefined. */
function proxyProblem(answer: IncomingMessage, url: URL): EgressRefusedError | EgressFailedError | undefined {
  const refused = headerText(answer.headers[REFUSED_HEADER]);
  const failed = headerText(answer.headers[FAILED_HEADER]);
  if (answer.statusCode === 403 && refused !== undefined) return new EgressRefusedError(refused, url.href);
  if (answer.statusCode === 502 && failed !== undefined) return new EgressFailedError(failed, url.href);
  return undefined;
}

function transportError(
  error: NodeJS.ErrnoException & { address?: string },
  options: ProxiedFetchOptions,
  url: URL,
): EgressFailedError {
  if (error.syscall === "connect" && (error.address === options.socketPath || error.code === "ENOENT"))
    return new EgressFailedError(
      `the egress proxy cannot be reached (${error.code ?? error.message}); the bot may be restarting, try again shortly`,
      url.href,
      { cause: error },
    );
  return new EgressFailedError(`${url.host} could not be reached: ${describeCause(error)}`, url.href, { cause: error });
}

/** Every socket of an exchange, so an abort or a failure destroys them all. */
function track<S extends Socket>(sockets: Socket[], socket: S): S {
  sockets.push(socket);
  // Failures are reported through the request or the body; a socket's own error must not end the child.
  socket.on("error", () => {});
  return socket;
}

/** What fetch rejects with on an abort: the signal's reason (an AbortError DOMException unless the caller gave one). */
function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
}

function headerText(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code !== undefined && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}

function hostOf(url: string | URL): string {
  try {
    return new URL(url).host;
  } catch {
    return String(url);
  }
}
