/**
 * A CONNECT request on an agent's socket: decide, connect to the checked address, answer
 * `200 Connection established`, then tunnel raw bytes (TLS, usually) until either end
 * closes. Refusals and failures are answered on the raw socket, since node:http hands
 * CONNECT sockets over without a response object.
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { ProxyContext } from "./proxy-context.js";
import { rawProblemResponse } from "./proxy-responses.js";
import { reachDestination } from "./reach-destination.js";
import { parseConnectTarget, type RequestTarget, RequestTargetError } from "./request-target.js";
import { joinSockets } from "./tunnel.js";

const ESTABLISHED = "HTTP/1.1 200 Connection established\r\n\r\n";

export async function handleConnect(context: ProxyContext, request: IncomingMessage, client: Socket, head: Buffer) {
  // Errors end in 'close'; without a listener one would crash the bot.
  client.on("error", () => client.destroy());
  let target: RequestTarget;
  try {
    target = parseConnectTarget(request.url ?? "");
  } catch (error) {
    if (!(error instanceof RequestTargetError)) throw error;
    client.end(rawProblemResponse("bad-request", error.message));
    context.rejectBadRequest(error.message);
    return;
  }
  const clientGone = new AbortController();
  client.once("close", () => clientGone.abort());
  const reached = await reachDestination(context, "CONNECT", target, clientGone.signal);
  if (!reached.ok) {
    if (reached.problem) client.end(rawProblemResponse(reached.problem.kind, reached.problem.reason));
    return;
  }
  const { upstream, checked } = reached;
  client.write(ESTABLISHED);
  // Bytes the client sent right behind the CONNECT head (a TLS ClientHello, often).
  if (head.length > 0) upstream.write(head);
  joinSockets(client, upstream, context.idleTimeoutMs, () =>
    context.record({ ...checked, bytesUp: upstream.bytesWritten, bytesDown: upstream.bytesRead }),
  );
}
