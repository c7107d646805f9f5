/**
 * The parent's side of the JSON-RPC connection to a child: requests out, answers in,
 * `$/cancelRequest` on request. The counterpart of the child's endpoint
 * (server/rpc-endpoint.ts), on vscode-jsonrpc's message types and ResponseError.
 *
 * Why not vscode-jsonrpc's connection: it hands over one answer per turn of the event
 * loop, so when eight answers arrive in one chunk, the eight calls that follow them go out
 * in eight separate writes (a sixth of the parent's time at concurrency 8). Here every
 * answer of a chunk settles at once, and the calls they release leave together.
 *
 * Its contract is the one ChildConnection relies on: after the input closes, request
 * throws; requests still waiting are not failed when the input closes (the child's exit
 * decides that), only by dispose, with vscode-jsonrpc's code -32097.
 */
import { closesOnce } from "../closes-once.js";
import { Message, ResponseError, type MessageReader, type MessageWriter } from "vscode-jsonrpc/node";

/** Called once per request: with its error, or with no error and its result. */
export type OnAnswer = (error: Error | undefined, result?: unknown) => void;

export type RpcClient = {
  /** Sends a request and returns its id; `onAnswer` runs once with the outcome. Throws once the connection is closed. */
  request(method: string, params: unknown, onAnswer: OnAnswer): number;
  /** Asks the child to cancel a request still waiting (`$/cancelRequest`); its answer still settles it. */
  cancel(id: number): void;
  /** Fires once, when the input or the output ends. */
  onClose(listener: () => void): void;
  listen(): void;
  /** Stops reading and fails every request still waiting (code -32097). */
  dispose(): void;
};

/** vscode-jsonrpc's code for requests still waiting when their connection is disposed. */
export const CONNECTION_DISPOSED = -32097;

export function createRpcClient(
  reader: MessageReader,
  writer: MessageWriter,
  log: { warn(message: string): void },
): RpcClient {
  // No promise, token or listener per request: a call is one entry here until its answer.
  const waiting = new Map<number, OnAnswer>();
  const closing = closesOnce(reader, writer);
  let nextId = 1;
  let disposed = false;

  const settle = (id: number): OnAnswer | undefined => {
    const onAnswer = waiting.get(id);
    if (onAnswer) waiting.delete(id);
    return onAnswer;
  };

  const receive = (message: Message): void => {
    if (!Message.isResponse(message)) return log.warn("the toolhost sent a message that is not an answer; ignored");
    const onAnswer = typeof message.id === "number" ? settle(message.id) : undefined;
    if (!onAnswer) return log.warn(`an answer to no waiting request (${String(message.id)}); ignored`);
    try {
      if (message.error) onAnswer(new ResponseError(message.error.code, message.error.message, message.error.data));
      else onAnswer(undefined, message.result);
    } catch (error) {
      // A caller's bug, not the child's: the other answers of the chunk must still be read.
      log.warn(
        `the handler of answer ${String(message.id)} threw: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  const fail = (id: number) => (error: unknown) =>
    settle(id)?.(error instanceof Error ? error : new Error(String(error)));

  return {
    request(method, params, onAnswer) {
      if (closing.closed || disposed) throw new Error("Connection is closed.");
      const id = nextId;
      nextId += 1;
      waiting.set(id, onAnswer);
      writer.write({ jsonrpc: "2.0", id, method, params } as Message).catch(fail(id));
      return id;
    },
    cancel(id) {
      if (waiting.has(id) && !closing.closed && !disposed)
        writer.write({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } } as Message).catch(() => undefined);
    },
    onClose: closing.onClose,
    listen: () => void reader.listen(receive),
    dispose() {
      if (disposed) return;
      disposed = true;
      reader.dispose();
      for (const id of [...waiting.keys()])
        settle(id)?.(new ResponseError(CONNECTION_DISPOSED, "The underlying JSON-RPC connection got disposed."));
    },
  };
}
