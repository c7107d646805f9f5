/** MESSAGE_MAX_CHARS and the one reply a longer message gets, in the bot's locale (channels/message-cap.ts applies it). */
import type { MessageCap } from "../channels/message-cap.js";
import { text, type Locale } from "./texts.js";

export function messageCap(maxChars: number, locale: Locale): MessageCap {
  return { maxChars, reply: (chars) => text(locale, "messageTooLong", { chars, maxChars }) };
}
