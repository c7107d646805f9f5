/**
 * The end of a JSON-RPC connection as both of our endpoints see it: closed once, when
 * either the input or the output ends, with listeners told once (at once if already so).
 */
import type { MessageReader, MessageWriter } from "vscode-jsonrpc/node";

export type Closing = {
  readonly closed: boolean;
  onClose: (listener: () => void) => void;
};

export function closesOnce(reader: MessageReader, writer: MessageWriter): Closing {
  const listeners: (() => void)[] = [];
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const listener of listeners.splice(0)) listener();
  };
  reader.onClose(close);
  writer.onClose(close);
  return {
    get closed() {
      return closed;
    },
    onClose: (listener) => void (closed ? listener() : listeners.push(listener)),
  };
}
