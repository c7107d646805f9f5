/**
 * MESSAGE_MAX_CHARS, at every channel's door: a message longer than it never reaches the
 * model (a 1 MB message went to the model whole, and a 300 KB one on Feishu drew 76
 * replies). Its sender gets one polite reply saying the limit instead. Characters are
 * code points, so a message of emoji or CJK counts as a person would count it. The reply's
 * words come from the locale tables (agent/message-cap-reply.ts): channels never import agent/.
 */
export type MessageCap = {
  maxChars: number;
  /** The one reply a message over the cap gets, naming its length and the limit. */
  reply(chars: number): string;
};

/** The message's length in code points when it is over the cap; undefined when it fits. */
export function overCap(message: string, cap: MessageCap): number | undefined {
  // A string has at least as many UTF-16 units as code points: one that short always fits.
  if (message.length <= cap.maxChars) return undefined;
  const chars = codePointCount(message);
  return chars > cap.maxChars ? chars : undefined;
}

/** Code points, without building an array of them (the text may be megabytes). */
export function codePointCount(value: string): number {
  let count = value.length;
  for (let index = 0; index < value.length - 1; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = value.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      count -= 1;
      index += 1;
    }
  }
  return count;
}
