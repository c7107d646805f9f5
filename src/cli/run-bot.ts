/**
 * Runs the bot on a channel until the channel ends or SIGINT/SIGTERM arrives, then
 * shuts down in order: channel, in-flight turns, toolhost children, store.
 */
import type { Channel } from "../channels/channel.js";
import type { Logger } from "../log/logger.js";
import type { BotRuntime } from "../runtime/bot-runtime.js";

export async function runBot(runtime: BotRuntime, channel: Channel, logger: Logger): Promise<void> {
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled = signal;
    logger.info({ signal }, "shutting down");
    void channel.stop();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await channel.run((message) => runtime.orchestrator.handle(message));
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (!signalled) logger.info({ channel: channel.name }, "channel ended; shutting down");
    await runtime.close();
    logger.info("stopped");
  }
}
