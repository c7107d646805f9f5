/**
 * The jail's only way out: inside an agent's jail the network namespace has nothing but
 * loopback, so the child listens on 127.0.0.1:<ephemeral port> and pipes every accepted
 * connection, byte for byte, to the egress proxy's Unix socket (bound into the jail at
 * the same path). Shell commands reach it through HTTP_PROXY and friends
 * (proxy-environment.ts); the proxy, outside the jail, decides what may pass.
 *
 * The forwarder does not speak HTTP. It only watches the first bytes the proxy sends back
 * on each connection: when they are the proxy's refusal (`403` with `X-Laoding-Refused`),
 * it keeps the reason for a short while, so shell.exec can tell the model that a failed
 * `curl` was NETWORK_REFUSED and why, instead of a bare exit code.
 *
 * Invariants: the two ends of a connection live and die together (an error or close on
 * one destroys the other); no error on a connection ever reaches the child's process;
 * memory per connection is the two sockets' buffers plus at most HEAD_WATCH_BYTES.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from "node:net";
import type { Logger } from "pino";
import { REFUSED_HEADER } from "./egress-errors.js";

/** The proxy's answer head is a few hundred bytes; a refusal not found within this is not looked for. */
const HEAD_WATCH_BYTES = 4 * 1024;
/** Refusals kept for refusalsSince; older ones are dropped (a command that failed minutes ago is not asked about). */
const DEFAULT_MAX_REFUSALS = 32;

export type ProxyForwarder = {
  /** The loopback port the forwarder listens on. */
  port: number;
  /** `http://127.0.0.1:<port>`: the proxy URL commands are given. */
  url: string;
  /**
   * Reasons of the refusals recorded at or after `sinceMs` (epoch ms, the clock's), oldest
   * first, without repeats; with `tag`, only those of connections that named that call.
   */
  refusalsSince(sinceMs: number, tag?: string): string[];
  /** Stops listening and destroys every open connection. Idempotent. */
  close(): Promise<void>;
};

export type ProxyForwarderOptions = {
  /** The egress proxy's Unix socket (inside the jail at the same path as outside). */
  socketPath: string;
  logger: Logger;
  /** Epoch milliseconds; injectable for tests. */
  now?: () => number;
  /** Size of the refusal ring. */
  maxRefusals?: number;
};

export async function startProxyForwarder(options: ProxyForwarderOptions): Promise<ProxyForwarder> {
  const { socketPath, logger } = options;
  const now = options.now ?? Date.now;
  const refusals = createRefusalRing(options.maxRefusals ?? DEFAULT_MAX_REFUSALS);
  const open = new Set<Socket>();

  // Half-open both ways: a client that shuts its side after sending a request still gets
  // the answer, exactly as it would without the forwarder in between.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = createConnection({ path: socketPath, allowHalfOpen: true });
    open.add(client);
    open.add(upstream);
    let closed = false;
    const closeBoth = () => {
      if (closed) return;
      closed = true;
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", (error) => {
      logger.debug({ err: error }, "egress forwarder: client connection failed");
      closeBoth();
    });
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      // The proxy's socket missing or refusing is the bot's fault, not the command's: worth a warning.
      if (!connected)
        logger.warn({ code: error.code, socketPath }, "egress forwarder: the egress proxy's socket cannot be reached");
      else logger.debug({ err: error }, "egress forwarder: proxy connection failed");
      closeBoth();
    });
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
    // Which call the connection is for: the proxy URL a command gets names its call as the
    // user (`http://<call>:x@127.0.0.1:<port>`), so clients send it as Proxy-Authorization.
    let tag: string | undefined;
    watchHead(client, (head) => {
      tag = callTagIn(head);
    });
    watchHead(upstream, (head) => {
      const reason = refusalIn(head);
      if (reason !== undefined) refusals.add(now(), reason, tag);
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on("error", (error) => logger.warn({ err: error }, "egress forwarder: listener error"));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host: "127.0.0.1", port: 0 }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    refusalsSince: (sinceMs, tag) => refusals.since(sinceMs, tag),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
        open.clear();
      });
      return closing;
    },
  };
}

/**
 * Calls `onHead` with the first bytes of `socket` up to the end of an HTTP head (or
 * HEAD_WATCH_BYTES). Stops listening then, so a long download or a TLS tunnel costs
 * nothing more.
 */
function watchHead(socket: Socket, onHead: (head: string) => void): void {
  const seen: Buffer[] = [];
  let seenBytes = 0;
  const onData = (chunk: Buffer) => {
    seen.push(chunk.subarray(0, HEAD_WATCH_BYTES - seenBytes));
    seenBytes += Math.min(chunk.length, HEAD_WATCH_BYTES - seenBytes);
    const head = Buffer.concat(seen).toString("latin1");
    const end = head.indexOf("\r\n\r\n");
    if (end < 0 && seenBytes < HEAD_WATCH_BYTES) return;
    socket.off("data", onData);
    onHead(end < 0 ? head : head.slice(0, end));
  };
  socket.on("data", onData);
}

/** The call a request names as its proxy user (Basic Proxy-Authorization), else undefined. */
export function callTagIn(head: string): string | undefined {
  const match = /\r\nproxy-authorization:[ \t]*basic[ \t]+([A-Za-z0-9+/=]+)/i.exec(head);
  if (!match) return undefined;
  const user =
    Buffer.from(match[1] as string, "base64")
      .toString("latin1")
      .split(":")[0] ?? "";
  return /^[A-Za-z0-9-]{1,64}$/.test(user) ? user : undefined;
}

/** The reason of a refusal head (`HTTP/1.x 403` with X-Laoding-Refused), else undefined. */
export function refusalIn(head: string): string | undefined {
  const lines = head.split("\r\n");
  if (!/^HTTP\/1\.[01] 403\b/.test(lines[0] ?? "")) return undefined;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === REFUSED_HEADER) {
      const reason = line.slice(colon + 1).trim();
      return reason === "" ? undefined : reason;
    }
  }
  return undefined;
}

/** A bounded ring of (time, reason, call): the newest `size` refusals. */
function createRefusalRing(size: number) {
  const entries: { atMs: number; reason: string; tag: string | undefined }[] = [];
  return {
    add(atMs: number, reason: string, tag: string | undefined) {
      entries.push({ atMs, reason, tag });
      if (entries.length > size) entries.splice(0, entries.length - size);
    },
    since(sinceMs: number, tag?: string): string[] {
      const matching = entries.filter((entry) => entry.atMs >= sinceMs && (tag === undefined || entry.tag === tag));
      return [...new Set(matching.map((entry) => entry.reason))];
    },
  };
}
