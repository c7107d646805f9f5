/**
 * The round-robin reverse proxy of the replicas bench (bench/replicas-bench.ts), in its own
 * process so that its CPU is counted apart from the fakes': each request goes to the next
 * upstream in turn over kept-alive connections (as Caddy or nginx would), its answer back.
 *
 *   node --import tsx bench/replicas-proxy.ts <upstream port> [<upstream port> ...]
 *
 * Prints the port it listens on (127.0.0.1) as one line on stdout; stops on SIGTERM.
 */
import { Agent, createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";

const ports = process.argv.slice(2).map(Number);
if (ports.length === 0 || ports.some((port) => !Number.isInteger(port) || port <= 0))
  throw new Error("usage: replicas-proxy.ts <upstream port> [...]");
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
let next = 0;

const server = createServer((incoming, response) => {
  const port = ports[next++ % ports.length] as number;
  const { host: _host, connection: _connection, ...headers } = incoming.headers;
  const outgoing = httpRequest(
    { host: "127.0.0.1", port, method: incoming.method, path: incoming.url, headers, agent },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  outgoing.on("error", () => {
    if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
    response.end("upstream failed");
  });
  incoming.pipe(outgoing);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
