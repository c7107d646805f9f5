/**
 * Output caps. Every answer travels as a JSON string inside a JSON-RPC frame, and JSON
 * escaping grows text: a control character becomes six bytes (`\u0001`), a quote two.
 * So caps are measured in bytes AFTER encoding, never in characters or raw bytes: a
 * listing of names made of control characters must not turn a 40 kB cap into a 240 kB
 * frame, nor a 16 MB cap into a frame the parent refuses (and kills the child for).
 *
 * Long text keeps its head and its tail around a marker saying how much was cut, so the
 * model sees both how a command started and how it ended.
 */

/** Room kept in a frame for the JSON-RPC envelope, the error reason and the tool name. */
export const FRAME_RESERVE_BYTES = 8 * 1024;
/** Largest encoded error reason: reasons quote the model's own arguments, which can be huge. */
export const REASON_MAX_BYTES = 2 * 1024;

/** The cap for one answer's text: the configured output cap, within what a frame can carry. */
export function answerBudget(outputMaxBytes: number, maxFrameBytes: number): number {
  return Math.max(1024, Math.min(outputMaxBytes, maxFrameBytes - FRAME_RESERVE_BYTES));
}

/** Bytes a UTF-16 code unit takes inside a JSON string (JSON.stringify, UTF-8). */
function unitCost(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    // A pair is one 4-byte character, counted on its high half; a lone half is escaped.
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 6;
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    const previous = text.charCodeAt(index - 1);
    return previous >= 0xd800 && previous <= 0xdbff ? 0 : 6;
  }
  return 3;
}

const NEEDS_COUNTING = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** Bytes `text` takes as a JSON string, without the quotes. */
export function encodedLength(text: string): number {
  // Fast path: nothing escaped, so the encoded size is the UTF-8 size.
  if (!NEEDS_COUNTING.test(text)) return Buffer.byteLength(text, "utf8");
  let total = 0;
  for (let index = 0; index < text.length; index += 1) total += unitCost(text, index);
  return total;
}

/** Index just past the longest prefix of `text` whose encoding fits `budget`, never splitting a pair. */
function prefixEnd(text: string, budget: number): number {
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const pair = unitCost(text, index) === 4;
    const cost = pair ? 4 : unitCost(text, index);
    if (used + cost > budget) break;
    used += cost;
    index += pair ? 2 : 1;
  }
  return index;
}

/** Index where the longest suffix of `text` whose encoding fits `budget` starts, never splitting a pair. */
function suffixStart(text: string, budget: number): number {
  let used = 0;
  let index = text.length;
  while (index > 0) {
    const low = text.charCodeAt(index - 1);
    const high = index >= 2 ? text.charCodeAt(index - 2) : 0;
    const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff;
    const cost = pair ? 4 : unitCost(text, index - 1);
    if (used + cost > budget) break;
    used += cost;
    index -= pair ? 2 : 1;
  }
  return index;
}

/**
 * Caps `text` so that its JSON encoding takes at most `maxBytes`: head and tail kept,
 * with a marker counting the UTF-8 bytes cut in between.
 */
export function headTail(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // No code unit takes more than six bytes encoded: a short text fits without counting.
  if (text.length * 6 <= maxBytes || encodedLength(text) <= maxBytes) return { text, truncated: false };
  // The marker is plain ASCII apart from its two ellipses; 64 bytes hold any count.
  const room = Math.max(0, maxBytes - 64);
  const headEnd = prefixEnd(text, Math.floor(room / 2));
  const tailStart = Math.max(headEnd, suffixStart(text, room - encodedLength(text.slice(0, headEnd))));
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const cut = Buffer.byteLength(text.slice(headEnd, tailStart), "utf8");
  return { text: `${head}\n…[${cut} bytes truncated]…\n${tail}`, truncated: true };
}

/**
 * The text of a capture that kept the head and the tail of a command's output
 * (`totalBytes` counts what the command wrote, kept or not), capped like `headTail`.
 */
export function capturedText(
  head: Buffer,
  tail: Buffer,
  totalBytes: number,
  maxBytes: number,
): { text: string; truncated: boolean } {
  const missing = totalBytes - head.length - tail.length;
  if (missing <= 0) return headTail(Buffer.concat([head, tail]).toString("utf8"), maxBytes);
  const text = `${head.toString("utf8").replace(/\uFFFD$/, "")}\n…[${missing} bytes truncated]…\n${tail.toString("utf8").replace(/^\uFFFD/, "")}`;
  return { text: headTail(text, maxBytes).text, truncated: true };
}

/** An error reason capped to REASON_MAX_BYTES encoded. */
export function boundReason(reason: string): string {
  return headTail(reason, REASON_MAX_BYTES).text;
}
