/**
 * An absolute-form plain HTTP request (`GET http://host:port/path HTTP/1.1`) on an agent's
 * socket: decide, connect to the checked address, send the request there with the
 * end-to-end headers only (Host set from the URL, as RFC 9112 asks of a proxy), stream the
 * body up and the answer down. One request per connection: the answer carries
 * `Connection: close`, which keeps the accounting and the teardown per request.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { endToEndHeaders } from "./forwarded-headers.js";
import { type ConnectionRecord, type ProxyContext, shownHost } from "./proxy-context.js";
import { sendProblem } from "./proxy-responses.js";
import { reachDestination } from "./reach-destination.js";

/** The headers only the proxy itself sends (proxy-responses.ts). */
const OUR_HEADERS = ["x-laoding-refused", "x-laoding-failed"];
import { type AbsoluteTarget, parseAbsoluteTarget, RequestTargetError } from "./request-target.js";

export async function handlePlainRequest(context: ProxyContext, request: IncomingMessage, response: ServerResponse) {
  let target: AbsoluteTarget;
  try {
    target = parseAbsoluteTarget(request.url ?? "");
  } catch (error) {
    if (!(error instanceof RequestTargetError)) throw error;
    sendProblem(response, "bad-request", error.message);
    context.rejectBadRequest(error.message);
    return;
  }
  const clientGone = new AbortController();
  response.once("close", () => clientGone.abort());
  const reached = await reachDestination(context, request.method ?? "GET", target, clientGone.signal);
  if (!reached.ok) {
    if (reached.problem) sendProblem(response, reached.problem.kind, reached.problem.reason);
    return;
  }
  const { upstream, checked } = reached;
  // Only now may the client send a body it held back for 100 Continue.
  if (request.headers.expect?.toLowerCase() === "100-continue") response.writeContinue();
  forward(context, { request, response, upstream, target, checked });
}

type Exchange = {
  request: IncomingMessage;
  response: ServerResponse;
  upstream: Socket;
  target: AbsoluteTarget;
  checked: ConnectionRecord;
};

function forward(context: ProxyContext, { request, response, upstream, target, checked }: Exchange): void {
  let recorded = false;
  const finish = (extra: Partial<ConnectionRecord>) => {
    if (recorded) return;
    recorded = true;
    upstream.destroy();
    context.record({ ...checked, bytesUp: upstream.bytesWritten, bytesDown: upstream.bytesRead, ...extra });
  };
  // The client's body framing is hop-by-hop: a chunked body goes up chunked again.
  const chunked = request.headers["transfer-encoding"] !== undefined && request.headers["content-length"] === undefined;
  const headers = [
    "Host",
    target.authority,
    ...endToEndHeaders(request.rawHeaders, ["host"]),
    ...(chunked ? ["Transfer-Encoding", "chunked"] : []),
    "Connection",
    "close",
  ];
  let upstreamRequest;
  try {
    upstreamRequest = httpRequest({
      method: request.method ?? "GET",
      path: target.path,
      headers,
      setHost: false,
      createConnection: () => upstream,
    });
  } catch (error) {
    const reason = `the request cannot be forwarded: ${(error as Error).message}`;
    sendProblem(response, "bad-request", reason);
    finish({ failed: true, reason });
    return;
  }
  upstream.setTimeout(context.idleTimeoutMs, () => upstream.destroy());
  request.socket.setTimeout(context.idleTimeoutMs, () => request.socket.destroy());
  upstreamRequest.on("response", (upstreamResponse) => {
    try {
      response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.statusMessage, [
        // An origin must not speak with the proxy's voice: its own refusal headers would be read as ours.
        ...endToEndHeaders(upstreamResponse.rawHeaders, OUR_HEADERS),
        "Connection",
        "close",
      ]);
    } catch (error) {
      // node:http's client reads some header bytes its server side refuses to write.
      const reason = `${shownHost(target.host)}:${target.port} answered with a head that cannot be forwarded (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
      sendProblem(response, "failed", reason);
      finish({ failed: true, reason });
      return;
    }
    upstreamResponse.on("error", () => response.destroy());
    upstreamResponse.pipe(response);
  });
  upstreamRequest.on("error", (error: NodeJS.ErrnoException) => {
    const reason = `${shownHost(target.host)}:${target.port} broke off the exchange (${error.code ?? error.message})`;
    sendProblem(response, "failed", reason);
    finish({ failed: true, reason });
  });
  response.once("close", () => finish({}));
  request.pipe(upstreamRequest);
}
