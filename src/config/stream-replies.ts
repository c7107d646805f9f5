/**
 * STREAM_REPLIES: which channels show an answer while it is written. A comma list whose
 * first item may be `on` or `off` (every channel; `on` when absent) and whose other items
 * set one channel each: `on,feishu=off`, `off,console=on`, `telegram=off`.
 */

export const STREAM_CHANNELS = ["console", "telegram", "feishu"] as const;
export type StreamChannel = (typeof STREAM_CHANNELS)[number];

/** Whether each channel streams its replies. */
export type StreamReplies = Record<StreamChannel, boolean>;

/** The accepted forms, as the variable's `expected` text. */
export const STREAM_REPLIES_FORMS =
  "on | off, optionally followed by console=on|off, telegram=on|off, feishu=on|off (a comma list such as on,feishu=off)";

export type StreamRepliesResult = { ok: true; value: StreamReplies } | { ok: false; problem: string };

const SWITCH = { on: true, off: false } as const;

/** Reads STREAM_REPLIES (already trimmed); a bad value's `problem` names the item at fault. */
export function parseStreamReplies(value: string): StreamRepliesResult {
  const items = value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) return { ok: false, problem: "empty" };
  let all = true;
  const set = new Map<StreamChannel, { item: string; on: boolean }>();
  for (const [index, item] of items.entries()) {
    if (item === "on" || item === "off") {
      if (index > 0) return { ok: false, problem: `"${item}" may only be the first item (it sets every channel)` };
      all = SWITCH[item];
      continue;
    }
    const match = /^([^=]*)=(.*)$/.exec(item);
    if (!match) return { ok: false, problem: `"${item}" is not on, off or <channel>=on|off` };
    const channel = (match[1] as string).trim();
    const setting = (match[2] as string).trim();
    if (!isStreamChannel(channel))
      return { ok: false, problem: `"${item}" names no channel that streams (${STREAM_CHANNELS.join(", ")})` };
    if (setting !== "on" && setting !== "off") return { ok: false, problem: `"${item}": ${channel} takes on or off` };
    const earlier = set.get(channel);
    if (earlier) return { ok: false, problem: `"${item}": ${channel} is already set by "${earlier.item}"` };
    set.set(channel, { item, on: SWITCH[setting] });
  }
  const streams = (channel: StreamChannel) => set.get(channel)?.on ?? all;
  return { ok: true, value: { console: streams("console"), telegram: streams("telegram"), feishu: streams("feishu") } };
}

function isStreamChannel(name: string): name is StreamChannel {
  return (STREAM_CHANNELS as readonly string[]).includes(name);
}
