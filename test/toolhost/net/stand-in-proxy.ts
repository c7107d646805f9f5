/**
 * A minimal forward proxy on a Unix socket that speaks the egress proxy's wire contract
 * (CONTRACT.md "Egress"): `CONNECT host:port` -> 200 and a raw tunnel; absolute-form
 * `GET http://host:port/path` -> forwarded with `Connection: close`; a host named
 * `refused.test` -> 403 with `X-Laoding-Refused`; an origin that cannot be reached -> 502
 * with `X-Laoding-Failed`. Every name resolves to 127.0.0.1 (the tests' origins listen
 * there), so `allowed.test:<port>` reaches a loopback server.
 *
 * It stands in for src/egress/ (written in parallel) so the child's side can be tested
 * on its own; it checks nothing else.
 */
import { createConnection, createServer, type Socket } from "node:net";

export const REFUSED_HOST = "refused.test";
export const refusalReason = (host: string) => `${host} is not on this agent's network allow list`;

export type StandInProxy = {
  socketPath: string;
  /** Request lines seen, in order (`CONNECT allowed.test:443`, `GET http://allowed.test:1234/page`). */
  requests: string[];
  /** Connections from clients still open. */
  openConnections(): number;
  close(): Promise<void>;
};

export async function startStandInProxy(socketPath: string): Promise<StandInProxy> {
  const requests: string[] = [];
  const clients = new Set<Socket>();
  // Half-open: a client that shuts its side after the request still gets the answer.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    clients.add(client);
    client.on("close", () => clients.delete(client));
    client.on("error", () => {});
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      client.pause();
      const [requestLine = "", ...headerLines] = buffered.subarray(0, end).toString("latin1").split("\r\n");
      handle(client, requestLine, headerLines, buffered.subarray(end + 4));
    };
    client.on("data", onData);
  });
  const handle = (client: Socket, requestLine: string, headerLines: string[], rest: Buffer) => {
    const [method = "", target = "", version = "HTTP/1.1"] = requestLine.split(" ");
    requests.push(`${method} ${target}`);
    if (method === "CONNECT") {
      const colon = target.lastIndexOf(":");
      const host = target.slice(0, colon).replace(/^\[|\]$/g, "");
      const port = Number(target.slice(colon + 1));
      if (host === REFUSED_HOST) return answer(client, "403 Forbidden", "X-Laoding-Refused", refusalReason(host));
      connectOrigin(client, port, target, (origin) => {
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        if (rest.length > 0) origin.write(rest);
      });
      return;
    }
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return answer(client, "400 Bad Request", "X-Stand-In", "absolute-form requests only");
    }
    if (url.hostname === REFUSED_HOST)
      return answer(client, "403 Forbidden", "X-Laoding-Refused", refusalReason(url.hostname));
    connectOrigin(client, Number(url.port || 80), url.host, (origin) => {
      const headers = headerLines.filter((line) => !/^(connection|proxy-connection|keep-alive):/i.test(line));
      const requestHead = [`${method} ${url.pathname}${url.search} ${version}`, ...headers, "Connection: close"];
      origin.write(`${requestHead.join("\r\n")}\r\n\r\n`);
      if (rest.length > 0) origin.write(rest);
    });
  };
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    requests,
    openConnections: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of clients) client.destroy();
        server.close(() => resolve());
      }),
  };
}

function answer(client: Socket, status: string, header: string, reason: string): void {
  const body = Buffer.from(reason, "utf8");
  client.end(
    `HTTP/1.1 ${status}\r\n${header}: ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${reason}`,
  );
}

/** Connects to the origin on loopback, then pipes both ways; a failure to connect is the contract's 502. */
function connectOrigin(client: Socket, port: number, target: string, onConnect: (origin: Socket) => void): void {
  const origin = createConnection({ host: "127.0.0.1", port });
  let connected = false;
  origin.once("connect", () => {
    connected = true;
    onConnect(origin);
    // The origin's end ends the client (after what is queued); a failure on either side kills both.
    origin.on("error", () => client.destroy());
    client.on("error", () => origin.destroy());
    client.on("close", () => origin.destroy());
    client.pipe(origin);
    origin.pipe(client);
    client.resume();
  });
  origin.once("error", (error: NodeJS.ErrnoException) => {
    if (!connected)
      answer(client, "502 Bad Gateway", "X-Laoding-Failed", `${target} could not be reached: ${error.code}`);
  });
}
