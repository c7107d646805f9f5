/**
 * A Content-Length message writer that puts each message on the stream as one buffer,
 * without waiting for the previous write to finish. vscode-jsonrpc's stock writer takes a
 * lock, writes the header and then the body as two writes, and waits for each write's
 * callback before the next message: two system calls per message, and no two messages
 * ever in the pipe together. The stream keeps the order of writes, so the lock bought
 * nothing here; failures still reach `onError` (from the stream's error event).
 *
 * With `batch: "tick"` (the parent's calls), messages written in the same tick leave in
 * one system call: the stream is corked until the tick ends. The child's answers leave
 * one by one (`batch: "none"`): the parent works on the first while the child serves the
 * next, and with two processes on two cores that overlap is worth more than the system
 * calls a batch saves (the A/B in bench/README.md).
 */
import type { Writable } from "node:stream";
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc/node";

export class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.writable.uncork();
  };

  private readonly batched: boolean;

  constructor(
    private readonly writable: Writable,
    options: { batch: "tick" | "none" },
  ) {
    super();
    this.batched = options.batch === "tick";
    writable.on("error", (error: Error) => this.fireError(error));
    writable.on("close", () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    try {
      const frame = frameText(message);
      if (this.batched && !this.corked) {
        this.corked = true;
        this.writable.cork();
        process.nextTick(this.uncork);
      }
      // A string, not a Buffer: the stream encodes it straight into the system call
      // (no buffer per message to allocate and collect).
      this.writable.write(frame, "utf8");
      return Promise.resolve();
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      this.errorCount += 1;
      this.fireError(error, message, this.errorCount);
      return Promise.reject(error);
    }
  }

  end(): void {
    this.writable.end();
  }
}

/** `Content-Length: N\r\n\r\n<body>`: the header counts the body's UTF-8 bytes. */
export function frameText(message: Message): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n${body}`;
}
