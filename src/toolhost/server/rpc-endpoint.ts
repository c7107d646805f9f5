/**
 * The child's side of the JSON-RPC connection: requests in, answers out, `$/cancelRequest`
 * honoured, on the same wire as vscode-jsonrpc (its message types, its reader and writer
 * interfaces, its cancellation tokens and error codes): any vscode-jsonrpc client can talk
 * to it; the parent uses client/rpc-client.ts.
 *
 * Why not vscode-jsonrpc's own connection here: it dispatches one message per turn of the
 * event loop (a `setImmediate` per message, a pass through the poll each) and its handlers
 * always answer through promises. This endpoint takes the requests of a chunk in order in
 * one turn: a handler that needs no waiting (a file read) returns its result directly and
 * is answered before the next request starts, its answer leaving at once (the child's
 * writer does not batch), so the parent works on it while the child serves the next; a
 * handler that waits (a shell command) is answered when its promise settles.
 *
 * The child only serves: it never sends requests, so a response arriving here is a
 * protocol fault of the parent, logged and ignored.
 */
import { closesOnce } from "../closes-once.js";
import {
  CancellationTokenSource,
  ErrorCodes,
  Message,
  ResponseError,
  type CancellationToken,
  type MessageReader,
  type MessageWriter,
  type RequestMessage,
} from "vscode-jsonrpc/node";

export type RequestHandler = (params: unknown, token: CancellationToken) => unknown;

export type RpcEndpoint = {
  onRequest(method: string, handler: RequestHandler): void;
  /** Fires once, when the input or the output ends (not on dispose). */
  onClose(listener: () => void): void;
  listen(): void;
  /** Stops reading, cancels every request still running; their answers are no longer sent. */
  dispose(): void;
};

const CANCEL_METHOD = "$/cancelRequest";

export function createRpcEndpoint(
  reader: MessageReader,
  writer: MessageWriter,
  log: { warn(message: string): void },
): RpcEndpoint {
  const handlers = new Map<string, RequestHandler>();
  const running = new Map<number | string, CancellationTokenSource>();
  const closing = closesOnce(reader, writer);
  let disposed = false;

  const send = (message: Message): void => {
    if (disposed) return;
    writer.write(message).catch(() => undefined); // the writer reports its failures through onError
  };

  const answer = (request: RequestMessage, result: unknown): void => {
    send({ jsonrpc: "2.0", id: request.id, result: result === undefined ? null : result } as Message);
  };

  const refuse = (request: RequestMessage, error: unknown): void => {
    const fault =
      error instanceof ResponseError
        ? error
        : new ResponseError(
            ErrorCodes.InternalError,
            `Request ${request.method} failed with message: ${error instanceof Error ? error.message : String(error)}`,
          );
    send({ jsonrpc: "2.0", id: request.id, error: fault.toJson() } as Message);
  };

  const handleRequest = (request: RequestMessage): void => {
    const handler = handlers.get(request.method);
    if (!handler)
      return refuse(request, new ResponseError(ErrorCodes.MethodNotFound, `Unhandled method ${request.method}`));
    const id = request.id as number | string;
    const cancellation = new CancellationTokenSource();
    running.set(id, cancellation);
    const done = () => {
      running.delete(id);
      cancellation.dispose();
    };
    let outcome: unknown;
    try {
      outcome = handler(request.params, cancellation.token);
    } catch (error) {
      done();
      return refuse(request, error);
    }
    if (!(outcome instanceof Promise)) {
      done();
      return answer(request, outcome);
    }
    outcome.then(
      (result) => {
        done();
        answer(request, result);
      },
      (error: unknown) => {
        done();
        refuse(request, error);
      },
    );
  };

  const receive = (message: Message): void => {
    if (disposed) return;
    if (Message.isRequest(message)) {
      if (message.id === null) return log.warn(`request ${message.method} without an id ignored`);
      return handleRequest(message);
    }
    if (Message.isNotification(message)) {
      if (message.method !== CANCEL_METHOD) return log.warn(`notification ${message.method} ignored`);
      const id = (message.params as { id?: unknown } | undefined)?.id;
      if (typeof id === "number" || typeof id === "string") running.get(id)?.cancel();
      return;
    }
    log.warn("a message that is not a request or a notification was ignored");
  };

  return {
    onRequest: (method, handler) => void handlers.set(method, handler),
    onClose: closing.onClose,
    listen: () => void reader.listen(receive),
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const cancellation of running.values()) cancellation.cancel();
      running.clear();
      reader.dispose();
    },
  };
}
