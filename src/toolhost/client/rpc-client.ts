/**
 * The parent's side of the JSON-RPC connection to a child: requests out, answers in,
 * `$/cancelRequest` for a cancelled token. The counterpart of the child's endpoint
 * (server/rpc-endpoint.ts), on vscode-jsonrpc's message types, tokens and ResponseError.
 *
 * Why not vscode-jsonrpc's connection: it hands over one answer per turn of the event
 * loop, so when eight answers arrive in one chunk, the eight calls that follow them go out
 * in eight separate writes (a sixth of the parent's time at concurrency 8). Here every
 * answer of a chunk settles at once, and the calls they release leave together.
 *
 * Its contract is the one ChildConnection relied on: after the input closes, sendRequest
 * throws; requests still waiting are not failed when the input closes (the child's exit
 * decides that), only by dispose, with vscode-jsonrpc's code -32097.
 */
import { closesOnce } from "../closes-once.js";
import { Message, ResponseError, type CancellationToken, type Disposable, type MessageReader, type MessageWriter } from "vscode-jsonrpc/node";

export type RpcClient = {
  sendRequest(method: string, params: unknown, token?: CancellationToken): Promise<unknown>;
  /** Fires once, when the input or the output ends. */
  onClose(listener: () => void): void;
  listen(): void;
  /** Stops reading and rejects every request still waiting (code -32097). */
  dispose(): void;
};

/** vscode-jsonrpc's code for requests still waiting when their connection is disposed. */
export const CONNECTION_DISPOSED = -32097;

type Waiting = { resolve: (result: unknown) => void; reject: (error: Error) => void; cancel?: Disposable };

export function createRpcClient(reader: MessageReader, writer: MessageWriter, log: { warn(message: string): void }): RpcClient {
  const waiting = new Map<number, Waiting>();
  const closing = closesOnce(reader, writer);
  let nextId = 1;
  let disposed = false;

  const settle = (id: number): Waiting | undefined => {
    const entry = waiting.get(id);
    if (!entry) return undefined;
    waiting.delete(id);
    entry.cancel?.dispose();
    return entry;
  };

  const receive = (message: Message): void => {
    if (!Message.isResponse(message)) return log.warn("the toolhost sent a message that is not an answer; ignored");
    const entry = typeof message.id === "number" ? settle(message.id) : undefined;
    if (!entry) return log.warn(`an answer to no waiting request (${String(message.id)}); ignored`);
    if (message.error) entry.reject(new ResponseError(message.error.code, message.error.message, message.error.data));
    else entry.resolve(message.result);
  };

  return {
    sendRequest(method, params, token) {
      if (closing.closed || disposed) throw new Error("Connection is closed.");
      const id = nextId;
      nextId += 1;
      return new Promise((resolve, reject) => {
        const entry: Waiting = { resolve, reject };
        waiting.set(id, entry);
        if (token) {
          entry.cancel = token.onCancellationRequested(() => {
            if (!closing.closed && !disposed) writer.write({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } } as Message).catch(() => undefined);
          });
        }
        writer.write({ jsonrpc: "2.0", id, method, params } as Message).catch((error: unknown) => {
          settle(id)?.reject(error instanceof Error ? error : new Error(String(error)));
        });
      });
    },
    onClose: closing.onClose,
    listen: () => void reader.listen(receive),
    dispose() {
      if (disposed) return;
      disposed = true;
      reader.dispose();
      for (const id of [...waiting.keys()]) settle(id)?.reject(new ResponseError(CONNECTION_DISPOSED, "The underlying JSON-RPC connection got disposed."));
    },
  };
}
