/**
 * A Content-Length message reader with limits. vscode-jsonrpc's stock reader buffers
 * without bound: a lying Content-Length or a flood of bytes without a header would eat
 * the parent's memory. This reader fails fast instead: a header block over
 * MAX_HEADER_BYTES, a frame over `maxFrameBytes`, a malformed header or a body that is
 * not JSON fires an error and closes, and the stream is no longer read.
 *
 * Bodies are decoded only once complete, so a multi-byte UTF-8 character split across
 * chunks arrives intact.
 */
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from "vscode-jsonrpc/node";

const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from("\r\n\r\n", "ascii");

export class FrameError extends Error {
  override readonly name = "FrameError";
}

export class BoundedMessageReader extends AbstractMessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  private expected: number | undefined;
  private failed = false;
  private callback: DataCallback | undefined;
  private readonly onData = (chunk: Buffer) => this.receive(chunk);
  private readonly onEnd = () => this.fireClose();
  private readonly onStreamError = (error: Error) => this.fireError(error);

  constructor(
    private readonly readable: NodeJS.ReadableStream,
    private readonly maxFrameBytes: number,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    this.readable.on("data", this.onData);
    this.readable.on("end", this.onEnd);
    this.readable.on("close", this.onEnd);
    this.readable.on("error", this.onStreamError);
    return { dispose: () => this.detach() };
  }

  override dispose(): void {
    this.detach();
    super.dispose();
  }

  private detach(): void {
    this.readable.off("data", this.onData);
    this.readable.off("end", this.onEnd);
    this.readable.off("close", this.onEnd);
    this.readable.off("error", this.onStreamError);
  }

  private receive(chunk: Buffer): void {
    if (this.failed) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    try {
      for (let message = this.next(); message !== undefined; message = this.next()) this.callback?.(message);
    } catch (error) {
      this.fail(error instanceof FrameError ? error : new FrameError(String(error)));
    }
  }

  /** One complete message from the buffer, or undefined when more bytes are needed. */
  private next(): Message | undefined {
    if (this.failed) return undefined;
    if (this.expected === undefined) {
      const end = this.buffer.indexOf(HEADER_END);
      if (end < 0) {
        if (this.buffer.length > MAX_HEADER_BYTES)
          throw new FrameError(`no header end within ${MAX_HEADER_BYTES} bytes`);
        return undefined;
      }
      this.expected = parseContentLength(this.buffer.subarray(0, end).toString("ascii"), this.maxFrameBytes);
      this.buffer = this.buffer.subarray(end + HEADER_END.length);
    }
    if (this.buffer.length < this.expected) return undefined;
    const body = this.buffer.subarray(0, this.expected);
    this.buffer = this.buffer.subarray(this.expected);
    this.expected = undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      throw new FrameError("frame body is not JSON");
    }
    if (typeof parsed !== "object" || parsed === null || (parsed as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
      throw new FrameError("frame is not a JSON-RPC 2.0 message");
    }
    return parsed as Message;
  }

  private fail(error: FrameError): void {
    this.failed = true;
    this.buffer = Buffer.alloc(0);
    this.detach();
    this.fireError(error);
    this.fireClose();
  }
}

/** The header every frame of ours has; anything else goes through the full parse. */
const PLAIN_HEADER = /^Content-Length: (\d{1,12})$/;

function parseContentLength(header: string, maxFrameBytes: number): number {
  const plain = PLAIN_HEADER.exec(header);
  const length = plain ? Number(plain[1]) : parseHeaderLines(header);
  if (length === undefined) throw new FrameError("missing Content-Length header");
  if (length > maxFrameBytes) throw new FrameError(`frame of ${length} bytes exceeds the maximum of ${maxFrameBytes}`);
  return length;
}

function parseHeaderLines(header: string): number | undefined {
  let length: number | undefined;
  for (const line of header.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new FrameError(`malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length") {
      if (!/^\d{1,12}$/.test(value))
        throw new FrameError(`invalid Content-Length ${JSON.stringify(value.slice(0, 40))}`);
      length = Number(value);
    } else if (name !== "content-type") {
      throw new FrameError(`unexpected header ${JSON.stringify(name.slice(0, 40))}`);
    }
  }
  return length;
}
