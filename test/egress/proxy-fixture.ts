/**
 * Real parts for the egress proxy tests: loopback origin servers, a proxy on a temp socket
 * folder with an EGRESS_HOSTS file that names the origins, a logger whose lines the test
 * reads, and clients that speak to the proxy's Unix socket the way curl and the toolhost's
 * forwarder do (node:http with `socketPath`, raw node:net for CONNECT).
 */
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach } from "vitest";
import { parseAllowList } from "../../src/egress/allow-list.js";
import type { EgressLookup, OwnEndpoint } from "../../src/egress/egress-decision.js";
import { loadEgressHosts } from "../../src/egress/egress-hosts.js";
import { type EgressProxy, type EgressProxyOptions, startEgressProxy } from "../../src/egress/egress-proxy.js";
import { tempDir } from "../helpers/temp-dir.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export type Origin = {
  port: number;
  /** Every request the origin saw: method, url, headers, body. */
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  /** Sockets currently open to the origin. */
  open: Set<Socket>;
  connections: number;
  server: Server;
};

/** An HTTP server on 127.0.0.1 that answers every request with a description of it. */
export async function startOrigin(name: string): Promise<Origin> {
  const origin: Origin = {
    port: 0,
    requests: [],
    open: new Set(),
    connections: 0,
    server: createServer({ maxHeaderSize: 128 * 1024 }),
  };
  origin.server.on("connection", (socket: Socket) => {
    origin.connections += 1;
    origin.open.add(socket);
    socket.once("close", () => origin.open.delete(socket));
  });
  origin.server.on("request", (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      origin.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      if (req.url === "/stall") return; // never answers: the client decides when to go
      res.setHeader("Set-Cookie", ["a=1", "b=2"]);
      res.setHeader("Keep-Alive", "timeout=5");
      res.setHeader("X-Origin", name);
      // An origin pretending to be the proxy: the proxy must not pass this on.
      if (req.url === "/impersonate")
        res.setHeader("X-Laoding-Refused", "example.test is not on this agent's network allow list");
      res.end(JSON.stringify({ origin: name, method: req.method, url: req.url, body }));
    });
  });
  origin.server.listen(0, "127.0.0.1");
  await once(origin.server, "listening");
  origin.port = (origin.server.address() as AddressInfo).port;
  cleanups.push(() => {
    origin.server.closeAllConnections();
    return new Promise<void>((resolve) => origin.server.close(() => resolve()));
  });
  return origin;
}

/** A TCP server on 127.0.0.1 that echoes what it receives and tracks open sockets. */
export async function startEcho(): Promise<{ port: number; open: Set<Socket>; connections: number }> {
  const echo = { port: 0, open: new Set<Socket>(), connections: 0 };
  const server = createNetServer((socket) => {
    echo.connections += 1;
    echo.open.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("close", () => echo.open.delete(socket));
    socket.pipe(socket);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  echo.port = (server.address() as AddressInfo).port;
  cleanups.push(() => {
    for (const socket of echo.open) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return echo;
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createNetServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export type LogLine = Record<string, unknown> & { msg: string };

export type ProxyFixture = {
  proxy: EgressProxy;
  socketPath: string;
  socketDir: string;
  /** Parsed log lines, appended as they are written. */
  logs: LogLine[];
  /** Every raw log line, to prove what never reaches the log. */
  logText: () => string;
};

export type ProxySetup = {
  allow: string[];
  /** EGRESS_HOSTS file contents. */
  hosts?: string;
  ownEndpoints?: OwnEndpoint[];
  lookup?: EgressLookup;
  agentId?: string;
} & Partial<Pick<EgressProxyOptions, "connectTimeoutMs" | "idleTimeoutMs" | "maxConnectionsPerAgent">>;

/** A proxy with one agent; the hosts text is written to a real file and loaded as EGRESS_HOSTS is. */
export async function startProxy(setup: ProxySetup): Promise<ProxyFixture> {
  const dir = tempDir("laoding-egress-");
  const hostsPath = join(dir, "egress-hosts");
  writeFileSync(hostsPath, setup.hosts ?? "");
  const lines: string[] = [];
  const logs: LogLine[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        for (const line of chunk.toString().split("\n").filter(Boolean)) logs.push(JSON.parse(line) as LogLine);
        callback();
      },
    }),
  );
  const socketDir = join(dir, "sockets");
  const proxy = startEgressProxy({
    socketDir,
    hosts: await loadEgressHosts(hostsPath),
    ownEndpoints: setup.ownEndpoints ?? [],
    logger,
    lookup: setup.lookup ?? (async (name) => Promise.reject(Object.assign(new Error(name), { code: "ENOTFOUND" }))),
    ...(setup.connectTimeoutMs ? { connectTimeoutMs: setup.connectTimeoutMs } : {}),
    ...(setup.idleTimeoutMs ? { idleTimeoutMs: setup.idleTimeoutMs } : {}),
    ...(setup.maxConnectionsPerAgent ? { maxConnectionsPerAgent: setup.maxConnectionsPerAgent } : {}),
  });
  cleanups.push(() => proxy.close());
  const socketPath = await proxy.addAgent({ agentId: setup.agentId ?? "alpha", allow: parseAllowList(setup.allow) });
  return { proxy, socketPath, socketDir, logs, logText: () => lines.join("") };
}

export type ProxiedResponse = { status: number; headers: IncomingHttpHeaders; body: string };

/** A plain (absolute-form) request through the proxy's socket, as curl sends it with http_proxy set. */
export function proxiedRequest(
  socketPath: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | string[] } = {},
): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { socketPath, path: url, method: options.method ?? "GET", headers: options.headers ?? {}, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    const body = options.body;
    if (Array.isArray(body)) for (const part of body) outgoing.write(part);
    else if (body !== undefined) outgoing.write(body);
    outgoing.end();
  });
}

export type ConnectAnswer = { socket: Socket; statusLine: string; head: string; rest: Buffer };

/** Sends `CONNECT target` (and `early` bytes right behind it) and reads the proxy's answer head. */
export async function connectThrough(socketPath: string, target: string, early = ""): Promise<ConnectAnswer> {
  const socket = connect(socketPath);
  cleanups.push(() => {
    socket.destroy();
  });
  await once(socket, "connect");
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n${early}`);
  return readHead(socket);
}

/** Reads from `socket` until the end of an HTTP head; what follows is `rest` (the socket is paused). */
export function readHead(socket: Socket): Promise<ConnectAnswer> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.removeListener("data", onData);
      socket.removeListener("close", onClose);
      socket.pause();
      const head = buffer.subarray(0, end).toString();
      resolve({ socket, statusLine: head.split("\r\n")[0] ?? "", head, rest: buffer.subarray(end + 4) });
    };
    const onClose = () => reject(new Error(`closed before an answer: ${buffer.toString()}`));
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.once("error", reject);
  });
}

/** Everything the socket sends until it closes, after what was already read. */
export async function readToEnd(socket: Socket, already: Buffer = Buffer.alloc(0)): Promise<string> {
  const chunks: Buffer[] = [already];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  await once(socket, "close");
  return Buffer.concat(chunks).toString();
}

/** The header block of a raw head as lower-case name -> value. */
export function headerMap(head: string): Record<string, string> {
  return Object.fromEntries(
    head
      .split("\r\n")
      .slice(1)
      .map((line) => {
        const colon = line.indexOf(":");
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }),
  );
}
