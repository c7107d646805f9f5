/**
 * The chat gateway: the one place where events of every chat platform become answers.
 * An event is taken in at once (deduplicated by its platform ids and queued in the
 * store, in one transaction, before the platform's acknowledgement; one event at a time,
 * in the order they arrived), decided on by the bot's access policy (a message over
 * MESSAGE_MAX_CHARS gets one reply instead of a turn), and answered in its chat's queue:
 * one message at a time per chat, chats in parallel, "typing" while the turn runs. The
 * answer is split, stored in the outbox and then sent.
 *
 * Stopping: receiving stops first; turns in flight and their deliveries may finish
 * within `graceMs`; messages not started stay queued and outbox rows not acknowledged
 * stay pending: the next start answers and sends them.
 */
import type { Logger } from "pino";
import type { ChannelStore } from "../store/channel-store.js";
import type { AccessPolicy } from "./access-policy.js";
import type { Channel, IncomingMessage, MessageHandler } from "./channel.js";
import type { BotIdentity, ChatPlatform, InboundEvent, PlatformMessage } from "./chat-platform.js";
import { createDeliveryOutbox, type DeliveryOutbox, type DeliveryOutboxOptions } from "./delivery-outbox.js";
import { overCap, type MessageCap } from "./message-cap.js";
import { PerChatQueue } from "./per-chat-queue.js";

/** Telegram's typing lasts 5 s: refresh a little sooner. */
export const TYPING_REFRESH_MS = 4_000;

export type GatewayBot = {
  /** Unique per bot: `telegram:<agent>`; keys the outbox and the inbox. */
  key: string;
  agentId: string;
  platform: ChatPlatform;
  access: AccessPolicy;
  identity: BotIdentity;
};

export type ChatGatewayOptions = {
  bots: GatewayBot[];
  store: ChannelStore;
  logger: Logger;
  /** The polite refusal for a user not on the allowlist (in BOT_LOCALE). */
  refusal: (message: PlatformMessage) => string;
  /** MESSAGE_MAX_CHARS and its reply in BOT_LOCALE (messageCap()). */
  messageCap: MessageCap;
  /** How long turns in flight and their deliveries may finish after stop(). */
  graceMs: number;
  typingRefreshMs?: number;
  delivery?: Pick<DeliveryOutboxOptions, "maxAttempts" | "retryBaseMs" | "retryMaxMs">;
};

export function createChatGateway(options: ChatGatewayOptions): Channel {
  const { store, logger } = options;
  const cap = options.messageCap;
  const queue = new PerChatQueue();
  const stopping = new AbortController();
  let stopRequested: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  let stopCalled = false;
  // Events are taken in one at a time, in the order the platforms handed them over: a
  // chat's messages reach its queue in that order, as when taking in was synchronous.
  let intake: Promise<void> = Promise.resolve();
  const inOrder = (work: () => Promise<void>): Promise<void> => {
    const turn = intake.then(work);
    intake = turn.catch(() => undefined);
    return turn;
  };

  return {
    name: [...new Set(options.bots.map((bot) => bot.platform.channel))].join("+"),
    async run(handler: MessageHandler) {
      const started: GatewayBot[] = [];
      try {
        for (const bot of options.bots) {
          const outbox = createDeliveryOutbox({ store, botKey: bot.key, platform: bot.platform, logger, stopping: stopping.signal, ...options.delivery });
          const chatKey = (chatId: string) => `${bot.key}:${chatId}`;
          const answer = (inboxId: number, message: PlatformMessage) => queue.push(chatKey(message.chatId), () => processMessage(bot, outbox, handler, inboxId, message));

          // What the last run left: replies not acknowledged, then messages not answered.
          const leftover = await outbox.chatsWithPending();
          for (const chatId of leftover) queue.push(chatKey(chatId), () => outbox.deliverChat(chatId));
          const queued = await store.queued(bot.key);
          for (const row of queued) answer(row.id, JSON.parse(row.message) as PlatformMessage);
          if (leftover.length + queued.length > 0) logger.info({ bot: bot.key, chatsWithUnsentReplies: leftover.length, unansweredMessages: queued.length }, "taking up what the last run left");

          // The platform acknowledges the event when this resolves: after it is stored.
          await bot.platform.start((event) =>
            inOrder(() => takeIn(bot, outbox, event, answer)).catch((error: unknown) => {
              // The store refused: the platform will re-deliver (it was not acknowledged by a reply).
              logger.error({ err: error, bot: bot.key }, "could not take an event in");
            }),
          );
          started.push(bot);
        }
      } catch (error) {
        // One bot that cannot start stops start-up: the ones already receiving stop too.
        await Promise.all(started.map((bot) => bot.platform.stop().catch(() => undefined)));
        throw error;
      }
      await stopped;
      await Promise.all(options.bots.map((bot) => bot.platform.stop().catch((error: unknown) => logger.warn({ err: error, bot: bot.key }, "stopping a channel failed"))));
      // Events handed over before the stop are stored (and queued) before the queue closes.
      await intake;
      const grace = setTimeout(() => stopping.abort(), options.graceMs);
      await queue.close();
      clearTimeout(grace);
      stopping.abort();
    },
    /** The first call stops receiving and lets turns finish within the grace; a second one cancels them now. */
    async stop() {
      if (stopCalled) return stopping.abort();
      stopCalled = true;
      stopRequested?.();
    },
  };

  async function takeIn(bot: GatewayBot, outbox: DeliveryOutbox, event: InboundEvent, answer: (inboxId: number, message: PlatformMessage) => void): Promise<void> {
    const { message } = event;
    const decision = bot.access.decide(message);
    // Over the cap: only its ids are kept (a re-delivery is still dropped), never its text;
    // it would reach the model later through the conversation's history.
    const tooLong = decision === "answer" ? overCap(message.text, cap) : undefined;
    const admitted = await store.admit(event.dedupKeys, decision === "answer" && tooLong === undefined ? { botKey: bot.key, chatId: message.chatId, message: JSON.stringify(message) } : undefined);
    const about = { bot: bot.key, chatId: message.chatId, userId: message.userId, messageId: message.messageId };
    if (admitted.duplicate) {
      logger.info(about, "re-delivered event dropped");
      return;
    }
    if (decision === "ignore") {
      logger.debug(about, "group message not addressed to the bot; ignored");
      return;
    }
    if (decision === "refuse") {
      logger.info(about, "user not on the allowlist; refused");
      return replyOnly(bot, outbox, message, options.refusal(message));
    }
    if (tooLong !== undefined) {
      logger.info({ ...about, chars: tooLong, maxChars: cap.maxChars }, "message over MESSAGE_MAX_CHARS; not sent to the model");
      return replyOnly(bot, outbox, message, cap.reply(tooLong));
    }
    answer(admitted.inboxId as number, message);
  }

  /** A reply the gateway gives itself, without a turn: stored in the outbox and sent in the chat's order. */
  async function replyOnly(bot: GatewayBot, outbox: DeliveryOutbox, message: PlatformMessage, reply: string): Promise<void> {
    await store.storeReply({ botKey: bot.key, chatId: message.chatId, parts: bot.platform.split(reply), ...replyTarget(message) });
    queue.push(`${bot.key}:${message.chatId}`, () => outbox.deliverChat(message.chatId));
  }

  async function processMessage(bot: GatewayBot, outbox: DeliveryOutbox, handler: MessageHandler, inboxId: number, platformMessage: PlatformMessage): Promise<void> {
    const message: IncomingMessage = {
      ...platformMessage,
      // Message ids are per bot (two bots in one chat count from the same numbers): the orchestrator's dedupe needs the bot too.
      ...(platformMessage.messageId ? { messageId: `${bot.key}/${platformMessage.messageId}` } : {}),
      agentId: bot.agentId,
      isOperator: bot.access.isOperator(platformMessage.userId),
    };
    const stopTyping = showTyping(bot.platform, platformMessage);
    let reply: string | undefined;
    try {
      reply = await handler(message, { signal: stopping.signal });
    } catch (error) {
      await store.finish(inboxId, "failed");
      logger.error({ err: error, bot: bot.key, chatId: message.chatId }, "answering a message failed");
      return;
    } finally {
      stopTyping();
    }
    // Cut short by the end of the grace period: stored by the orchestrator, never sent.
    if (stopping.signal.aborted) return store.finish(inboxId, "cancelled");
    if (reply === undefined) return store.finish(inboxId, "answered");
    await store.storeReply({ botKey: bot.key, chatId: message.chatId, inboxId, parts: bot.platform.split(reply), ...replyTarget(platformMessage) });
    await outbox.deliverChat(message.chatId);
  }

  function showTyping(platform: ChatPlatform, message: PlatformMessage): () => void {
    if (!platform.typing) return () => undefined;
    const typing = () => void platform.typing?.(message.chatId, message.threadId).catch(() => undefined);
    typing();
    const timer = setInterval(typing, options.typingRefreshMs ?? TYPING_REFRESH_MS);
    return () => clearInterval(timer);
  }
}

function replyTarget(message: PlatformMessage): { replyTo?: string; threadId?: string } {
  return { ...(message.messageId ? { replyTo: message.messageId } : {}), ...(message.threadId ? { threadId: message.threadId } : {}) };
}
