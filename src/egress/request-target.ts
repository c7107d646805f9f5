/**
 * The destination of a proxy request, read from the request line: `host:port` of a
 * CONNECT, or the authority of an absolute-form `http://host[:port]/path`. The authority is
 * split here by hand rather than by the WHATWG URL parser, which rewrites `0x7f.1` and
 * `2130706433` into 127.0.0.1: the decision must see the host as the client spelled it, so
 * that loose spellings are refused by name (egress-decision.ts), not silently accepted.
 */

export type RequestTarget = {
  /** The host as written, without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
};

export type AbsoluteTarget = RequestTarget & {
  /** The path and query, as sent (`/` when the URL has none). */
  readonly path: string;
  /** `host[:port]` as written, for the Host header the origin receives. */
  readonly authority: string;
};

/** A request this proxy cannot read; the proxy answers 400 with the message. */
export class RequestTargetError extends Error {
  override readonly name = "RequestTargetError";
}

const DEFAULT_HTTP_PORT = 80;

/** `host:port` or `[v6]:port`; the port is required. */
export function parseConnectTarget(text: string): RequestTarget {
  return parseAuthority(text, undefined);
}

/** `http://authority/path?query` (scheme case-insensitive); https and other schemes are refused with the reason. */
export function parseAbsoluteTarget(text: string): AbsoluteTarget {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/i.exec(text);
  if (!match)
    throw new RequestTargetError(
      "this is a forward proxy: send absolute-form requests (GET http://host/path HTTP/1.1) or CONNECT host:port",
    );
  const [, scheme = "", authority = "", rest = ""] = match;
  if (scheme.toLowerCase() !== "http")
    throw new RequestTargetError(`${scheme}:// URLs are not proxied as plain requests; use CONNECT host:port for TLS`);
  if (authority.includes("@"))
    throw new RequestTargetError("user names and passwords in the URL are not forwarded; send an Authorization header");
  const target = parseAuthority(authority, DEFAULT_HTTP_PORT);
  const path = rest === "" ? "/" : rest.startsWith("/") ? rest : `/${rest}`;
  return { ...target, path, authority };
}

function parseAuthority(text: string, defaultPort: number | undefined): RequestTarget {
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const match = /^\[([^\]]+)\](?::([^:]*))?$/.exec(text);
    if (!match) throw new RequestTargetError(`"${text}" is not host:port ([IPv6 address]:port for IPv6)`);
    [, host = "", portText] = match;
  } else {
    const parts = text.split(":");
    if (parts.length > 2)
      throw new RequestTargetError(`"${text}" is not host:port; write IPv6 addresses in brackets ([::1]:443)`);
    [host = "", portText] = parts;
  }
  if (host === "") throw new RequestTargetError(`"${text}" names no host`);
  if (portText === undefined || portText === "") {
    if (defaultPort === undefined) throw new RequestTargetError(`"${text}" has no port; CONNECT needs host:port`);
    return { host, port: defaultPort };
  }
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535)
    throw new RequestTargetError(`"${text}" has no valid port (a number 1-65535)`);
  return { host, port: Number(portText) };
}
