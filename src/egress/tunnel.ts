/**
 * Two sockets joined byte for byte (a CONNECT tunnel, or a plain request's upstream and
 * the client): whichever end closes, errs or sits idle past the timeout, both are
 * destroyed, so a client that vanishes never leaves an origin connection behind.
 */
import type { Socket } from "node:net";

/** Pipes `client` and `upstream` both ways; `onClosed` runs once, when both have closed. */
export function joinSockets(client: Socket, upstream: Socket, idleTimeoutMs: number, onClosed: () => void): void {
  const destroyBoth = () => {
    client.destroy();
    upstream.destroy();
  };
  let open = 2;
  for (const socket of [client, upstream]) {
    socket.setTimeout(idleTimeoutMs, destroyBoth);
    socket.on("error", destroyBoth);
    socket.once("close", () => {
      destroyBoth();
      open -= 1;
      if (open === 0) onClosed();
    });
  }
  client.pipe(upstream);
  upstream.pipe(client);
}
