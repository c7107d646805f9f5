/**
 * STREAM_REPLIES and STREAM_EDIT_INTERVAL_MS as the channels take them: the console's
 * switch, and the chat gateway's streaming options.
 */
import type { ChatStreaming } from "../channels/chat-gateway.js";
import type { Config } from "../config/load-config.js";
import { text } from "../locale/texts.js";

type StreamSettings = Pick<Config, "STREAM_REPLIES" | "STREAM_EDIT_INTERVAL_MS" | "BOT_LOCALE">;

/** Whether the console prints answers as they are written. */
export function consoleStreams(config: StreamSettings): boolean {
  return config.STREAM_REPLIES.console;
}

/**
 * The chat gateway's `streaming` option. Given even when neither Telegram nor Feishu streams
 * (an empty set): a preview a stopped run left behind is still marked interrupted after
 * STREAM_REPLIES turned streaming off.
 */
export function gatewayStreaming(config: StreamSettings): ChatStreaming {
  const locale = config.BOT_LOCALE;
  return {
    channels: new Set((["telegram", "feishu"] as const).filter((channel) => config.STREAM_REPLIES[channel])),
    intervalMs: config.STREAM_EDIT_INTERVAL_MS,
    statusText: (tool) => text(locale, "streamToolStatus", { tool }),
    interruptedText: text(locale, "streamInterrupted"),
  };
}
