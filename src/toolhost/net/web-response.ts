/**
 * A node:http answer as a WHATWG Response whose body streams: chunks reach the reader as
 * they arrive (MCP's SSE answers never end), the socket is read no faster than the
 * reader reads (64 KiB queued at most, counted in bytes), and cancelling the body
 * destroys the connection, so a caller that stops after 2 MiB of a 50 MB body stops the
 * download too.
 */
import type { IncomingMessage } from "node:http";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/** Bytes queued in the web stream before the socket is paused. */
const QUEUE_BYTES = 64 * 1024;
/** Statuses whose answer has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * Builds the Response of `answer`. `bodyError` turns a failure while the body streams
 * (a reset, an abort) into the error the reader sees. A compressed body is decompressed,
 * as fetch does; the headers stay as the server sent them.
 */
export function toWebResponse(
  answer: IncomingMessage,
  options: { url: string; method: string; bodyError: (error: Error) => unknown },
): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    try {
      headers.append(raw[index] as string, raw[index + 1] as string);
    } catch {
      // A header value fetch would refuse (a bare CR, say) is dropped, not fatal.
    }
  }
  // Failures reach the reader through the body (below); none may go unhandled and end the child.
  answer.on("error", () => {});
  const status = answer.statusCode ?? 0;
  let body: ReadableStream<Uint8Array> | null = null;
  if (options.method === "HEAD" || NULL_BODY_STATUSES.has(status)) answer.resume();
  else body = toWebStream(decoded(answer, headers.get("content-encoding")), answer, options.bodyError);
  const response = new Response(body, { status, statusText: answer.statusMessage ?? "", headers });
  // Response.url is read-only and empty for a constructed Response; callers read it to know where they landed.
  Object.defineProperty(response, "url", { value: options.url });
  return response;
}

function decoded(answer: IncomingMessage, encoding: string | null): Readable {
  const name = encoding?.trim().toLowerCase();
  const decoder =
    name === "gzip" || name === "x-gzip"
      ? createGunzip()
      : name === "deflate"
        ? createInflate()
        : name === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return answer;
  // pipeline destroys both when either fails or is destroyed (a cancelled body closes the connection).
  return pipeline(answer, decoder, () => {});
}

function toWebStream(
  source: Readable,
  answer: IncomingMessage,
  bodyError: (error: Error) => unknown,
): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // After a cancel, data already on its way is dropped: the stream is closed to it.
        source.on("data", (chunk: Buffer) => {
          if (done) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) source.pause();
        });
        source.once("end", () => {
          if (done) return;
          done = true;
          controller.close();
        });
        const fail = (error: Error) => {
          if (done) return;
          done = true;
          controller.error(bodyError(error));
        };
        source.on("error", fail);
        // A connection closed before the end of the body, with no error of its own.
        source.once("close", () => fail(Object.assign(new Error("aborted"), { code: "ECONNRESET" })));
        source.pause();
      },
      pull() {
        source.resume();
      },
      cancel() {
        done = true;
        source.destroy();
        answer.destroy();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_BYTES }),
  );
}
