/**
 * The proxy's side of a connection to an origin: a TCP connection to one of the addresses
 * the decision checked, tried in order (a name may have an IPv6 address this machine has
 * no route to), each within the connect timeout. Never a name: resolving again here would
 * let DNS answer differently from what was checked (rebinding).
 */
import { connect, type Socket } from "node:net";

export class UpstreamConnectError extends Error {
  override readonly name = "UpstreamConnectError";
}

export type UpstreamConnectOptions = {
  readonly addresses: readonly string[];
  readonly port: number;
  readonly timeoutMs: number;
  /** Aborted when the client goes away first: the attempt in flight is dropped. */
  readonly signal: AbortSignal;
};

/** A connected socket, or throws UpstreamConnectError whose message lists each address's failure. */
export async function connectUpstream(options: UpstreamConnectOptions): Promise<Socket> {
  const failures: string[] = [];
  for (const address of options.addresses) {
    if (options.signal.aborted) break;
    try {
      return await connectOne(address, options);
    } catch (error) {
      failures.push(`${address}: ${(error as Error).message}`);
    }
  }
  throw new UpstreamConnectError(failures.join("; ") || "the client went away before the connection was made");
}

function connectOne(address: string, options: UpstreamConnectOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port: options.port });
    const settle = (error?: Error) => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      socket.removeListener("error", onError);
      socket.removeListener("connect", onConnect);
      if (error) {
        socket.destroy();
        reject(error);
      } else resolve(socket);
    };
    const onError = (error: NodeJS.ErrnoException) => settle(new Error(error.code ?? error.message));
    const onConnect = () => settle();
    const onAbort = () => settle(new Error("client disconnected"));
    const timer = setTimeout(() => settle(new Error(`timed out after ${options.timeoutMs} ms`)), options.timeoutMs);
    socket.once("error", onError);
    socket.once("connect", onConnect);
    options.signal.addEventListener("abort", onAbort, { once: true });
  });
}
