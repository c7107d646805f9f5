/**
 * Reads a response body up to a byte limit while it streams: past the limit the rest is
 * never read and the body is cancelled (which closes the connection), so a 50 MB answer
 * costs the limit in memory, not 50 MB.
 */

export type LimitedBody = {
  bytes: Buffer;
  /** The body went on past `maxBytes` and was cut there. */
  cut: boolean;
};

export async function readLimitedBody(response: Response, maxBytes: number): Promise<LimitedBody> {
  if (!response.body) return { bytes: Buffer.alloc(0), cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, total), cut: false };
    if (total + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      // Not awaited: a server that keeps sending must not hold the answer we already have.
      reader.cancel().catch(() => {});
      return { bytes: Buffer.concat(chunks, maxBytes), cut: true };
    }
    chunks.push(value);
    total += value.byteLength;
  }
}
