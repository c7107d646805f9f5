/**
 * The proxy's own answers, in the contract's exact shape: a refusal is 403 with
 * `X-Laoding-Refused: <reason>`, an allowed destination that cannot be reached is 502 with
 * `X-Laoding-Failed: <reason>`, a request the proxy cannot read is 400; each with the
 * reason as a UTF-8 text body and `Connection: close`. Clients (web.fetch, curl, the MCP
 * client) read the header; people read the body.
 */
import type { ServerResponse } from "node:http";

export type ProblemKind = "refused" | "failed" | "bad-request" | "busy";

const STATUS: Record<ProblemKind, { code: number; text: string; header?: string }> = {
  refused: { code: 403, text: "Forbidden", header: "X-Laoding-Refused" },
  failed: { code: 502, text: "Bad Gateway", header: "X-Laoding-Failed" },
  "bad-request": { code: 400, text: "Bad Request" },
  busy: { code: 503, text: "Service Unavailable", header: "X-Laoding-Failed" },
};

/** Header values carry printable ASCII only; the body keeps the reason whole. */
function headerSafe(reason: string): string {
  return reason.replace(/[^\x20-\x7e]/g, "?");
}

function problemHeaders(kind: ProblemKind, reason: string): [string, string][] {
  const status = STATUS[kind];
  return [
    ...(status.header ? [[status.header, headerSafe(reason)] as [string, string]] : []),
    ["Content-Type", "text/plain; charset=utf-8"],
    ["Content-Length", String(Buffer.byteLength(reason))],
    ["Connection", "close"],
  ];
}

/** The whole response as bytes, for a socket outside node:http's response machinery (CONNECT, bad heads). */
export function rawProblemResponse(kind: ProblemKind, reason: string): string {
  const status = STATUS[kind];
  const headers = problemHeaders(kind, reason)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return `HTTP/1.1 ${status.code} ${status.text}\r\n${headers}\r\n${reason}`;
}

/** The same answer through a node:http response. */
export function sendProblem(response: ServerResponse, kind: ProblemKind, reason: string): void {
  const status = STATUS[kind];
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status.code, status.text, problemHeaders(kind, reason).flat());
  response.end(reason);
}
