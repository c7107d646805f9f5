/**
 * Runs the bot on a channel until the channel ends or SIGINT/SIGTERM arrives, then
 * shuts down in order: channel, in-flight turns, toolhost children, store.
 *
 * The first signal stops taking messages and gives the turns in flight `graceMs` to
 * finish; then they are cancelled (their model calls aborted, their commands killed).
 * A second signal cancels them at once. Either way the process ends with nothing of the
 * bot's left running.
 */
import type { Channel, MessageHandler } from "../channels/channel.js";
import type { Logger } from "../log/logger.js";
import type { BotRuntime } from "../runtime/bot-runtime.js";

export type RunBotOptions = {
  /** How long turns in flight may finish after the first signal. */
  graceMs: number;
};

export async function runBot(
  runtime: BotRuntime,
  channel: Channel,
  logger: Logger,
  options: RunBotOptions,
): Promise<void> {
  const shutdown = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, "second signal: cancelling the turns in flight now");
      shutdown.abort();
      // A chat channel hears it too: what the cancelled turns say is stored, never sent.
      void channel.stop();
      return;
    }
    signalled = signal;
    logger.info({ signal, graceMs: options.graceMs }, "shutting down; turns in flight may finish");
    graceTimer = setTimeout(() => {
      logger.warn({ graceMs: options.graceMs }, "grace period over: cancelling the turns in flight");
      shutdown.abort();
    }, options.graceMs);
    void channel.stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const handle: MessageHandler = async (message, control = {}) => {
    const turn = linkedSignal([shutdown.signal, ...(control.signal ? [control.signal] : [])]);
    try {
      return await runtime.orchestrator.handle(message, { ...control, signal: turn.signal });
    } finally {
      turn.unlink();
    }
  };
  try {
    await channel.run(handle);
    // A channel may end while another chat's turn still runs (Telegram, Feishu): let it finish, within the grace.
    await runtime.orchestrator.idle();
  } finally {
    clearTimeout(graceTimer);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (!signalled) logger.info({ channel: channel.name }, "channel ended; shutting down");
    await runtime.close();
    logger.info("stopped");
  }
}

/**
 * A signal that aborts when any source does, unlinked from them by hand when the turn ends.
 * Not AbortSignal.any: on Node 20 a composite that ever got an abort listener (fetch adds
 * one) stays reachable from a long-lived source, here the bot's shutdown signal, so every
 * message leaked a few controllers (about 6 KiB a message, bench/README.md).
 */
function linkedSignal(sources: AbortSignal[]): { signal: AbortSignal; unlink: () => void } {
  const controller = new AbortController();
  const listeners = sources.map((source) => {
    const abort = () => controller.abort(source.reason);
    if (source.aborted) abort();
    else source.addEventListener("abort", abort, { once: true });
    return () => source.removeEventListener("abort", abort);
  });
  return { signal: controller.signal, unlink: () => listeners.forEach((remove) => remove()) };
}
