/**
 * Output caps: keep the head and the tail, with a marker saying how much was cut,
 * so the model sees both how a command started and how it ended.
 */
export function headTail(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return { text, truncated: false };
  return { text: headTailOfBuffer(Buffer.from(text, "utf8"), maxBytes, bytes), truncated: true };
}

/** `totalBytes` may exceed the buffer when capture itself stopped early. */
export function headTailOfBuffer(buffer: Buffer, maxBytes: number, totalBytes = buffer.length): string {
  const half = Math.floor(maxBytes / 2);
  const head = buffer.subarray(0, half).toString("utf8").replace(/\uFFFD$/, "");
  const tail = buffer.subarray(Math.max(half, buffer.length - half)).toString("utf8").replace(/^\uFFFD/, "");
  const cut = totalBytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return `${head}\n…[${cut} bytes truncated]…\n${tail}`;
}
