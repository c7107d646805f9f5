/**
 * The chat gateway: the one place where events of every chat platform become answers.
 * An event is taken in at once (deduplicated by its platform ids and queued in the
 * store, in one transaction, before the platform's acknowledgement; one event at a time,
 * in the order they arrived), decided on by the bot's access policy (a message over
 * MESSAGE_MAX_CHARS gets one reply instead of a turn), and answered by whichever replica
 * holds its chat's lease (chat-scheduler.ts): one message at a time per chat across every
 * replica on the database, chats in parallel, "typing" while the turn runs. The answer is
 * split and stored in the outbox — only while the chat's lease is still this replica's —
 * and then sent. Platforms this replica must hold a connection to (long polling, Feishu's
 * long connection) are received by one replica at a time, by lease; webhooks by all.
 *
 * Streaming (STREAM_REPLIES, `streaming`): while a turn runs its answer is shown as it grows
 * on the platform's preview (reply-stream.ts paces it); the preview's ref is stored the
 * moment it appears, so the reply's first part replaces it (edit_ref), and a run that takes
 * up a message a stopped run was streaming marks that preview interrupted first.
 *
 * Stopping: receiving stops first; turns in flight and their deliveries may finish
 * within `graceMs`; messages not started stay queued and outbox rows not acknowledged
 * stay pending: the next start (or another replica) answers and sends them.
 */
import type { Logger } from "pino";
import type { ChannelStore, InboxRow } from "../store/channel-store.js";
import type { ChatWorkStore } from "../store/chat-work-store.js";
import { isStoreFailure } from "../store/sql/sql-driver.js";
import type { LeaseKeeper } from "../replica/lease-keeper.js";
import { runAsLeader, type Leadership } from "../replica/leader.js";
import type { AccessPolicy } from "./access-policy.js";
import type { Channel, IncomingMessage, MessageHandler, TurnControl } from "./channel.js";
import type { BotIdentity, ChatPlatform, InboundEvent, PlatformMessage } from "./chat-platform.js";
import { createDeliveryOutbox, type DeliveryOutboxOptions } from "./delivery-outbox.js";
import { overCap, type MessageCap } from "./message-cap.js";
import { createChatScheduler, type ChatLease, type ChatScheduler } from "./chat-scheduler.js";
import { createReplyStream, type ReplyStream, type StreamTimers } from "./reply-stream.js";

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
  /** Where replicas share the chats (queued work, outbox claims). */
  work: ChatWorkStore;
  /** This replica's leases: a chat's turns, and the platform connections only one replica may hold. */
  keeper: LeaseKeeper;
  /** Runs a write in one transaction (a reply is stored only while the chat's lease is still ours). */
  transaction: <T>(work: () => Promise<T>) => Promise<T>;
  logger: Logger;
  /** The polite refusal for a user not on the allowlist (in BOT_LOCALE). */
  refusal: (message: PlatformMessage) => string;
  /** Said once per chat, sent directly, while the database does not answer (BOT_LOCALE); the message stays queued. */
  databaseDown?: (message: PlatformMessage) => string;
  /** MESSAGE_MAX_CHARS and its reply in BOT_LOCALE (messageCap()). */
  messageCap: MessageCap;
  /** How long turns in flight and their deliveries may finish after stop(). */
  graceMs: number;
  typingRefreshMs?: number;
  delivery?: Pick<DeliveryOutboxOptions, "maxAttempts" | "retryBaseMs" | "retryMaxMs">;
  /** STREAM_REPLIES: answers shown while they are written, on these platforms; absent: no platform streams. */
  streaming?: ChatStreaming | undefined;
};

export type ChatStreaming = {
  /** The platforms that stream (where the platform can: ChatPlatform.openPreview). */
  channels: ReadonlySet<"telegram" | "feishu">;
  /** STREAM_EDIT_INTERVAL_MS: the least time between two shows of one preview. */
  intervalMs: number;
  /** The status line a preview shows while a tool runs (BOT_LOCALE). */
  statusText: (tool: string) => string;
  /** What a preview a stopped run left behind is edited to say (BOT_LOCALE); its answer follows as a new message. */
  interruptedText: string;
  /** The previews' clock (tests). */
  timers?: StreamTimers;
};

export function createChatGateway(options: ChatGatewayOptions): Channel {
  const { store, logger, keeper } = options;
  const cap = options.messageCap;
  const schedulers = new Map<string, ChatScheduler>();
  const leaderships: Leadership[] = [];
  /** Chats told that the database is down; forgotten when a reply is stored again. */
  const toldDatabaseDown = new Set<string>();
  const stopping = new AbortController();
  let stopRequested: (() => void) | undefined;
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  let stopCalled = false;
  const housekeeping: Promise<void>[] = [];
  // Events are taken in one at a time, in the order the platforms handed them over: a
  // chat's messages reach the inbox in that order.
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
          const outbox = createDeliveryOutbox({
            store,
            work: options.work,
            holder: keeper.holder,
            claimMs: keeper.ttlMs,
            botKey: bot.key,
            platform: bot.platform,
            logger,
            stopping: stopping.signal,
            ...options.delivery,
          });
          const scheduler = createChatScheduler({
            botKey: bot.key,
            work: options.work,
            keeper,
            logger,
            answer: (row, lease) => processMessage(bot, handler, row, lease),
            deliver: (chatId, lease) => outbox.deliverChat(chatId, lease.lost),
          });
          schedulers.set(bot.key, scheduler);

          // The platform acknowledges the event when this resolves: after it is stored. A store
          // that refuses rejects it, so the platform does not count it delivered and sends it again.
          const receive = (failed?: (error: Error) => void) =>
            bot.platform.start(
              (event) =>
                inOrder(() => takeIn(bot, scheduler, event)).catch((error: unknown) => {
                  logger.error(
                    { err: error, bot: bot.key },
                    "could not take an event in; the platform will deliver it again",
                  );
                  throw error;
                }),
              failed,
            );
          if (bot.platform.receiving === "pull") {
            // Long polling and long connections: one replica at a time holds the connection.
            const leadership = runAsLeader(
              keeper,
              `receive:${bot.key}`,
              { start: (failed) => receive(failed), stop: () => bot.platform.stop() },
              logger.child({ bot: bot.key }),
            );
            leaderships.push(leadership);
            await leadership.settled;
          } else {
            await receive();
          }
          started.push(bot);
          // Previews of messages finished without a reply (a stop past the grace period): marked interrupted, in the background.
          housekeeping.push(markAbandoned(bot));
          // What the last run (or a replica that died) left: unsent replies and unanswered messages
          // (a chat's earlier replies still go out before its new messages are answered).
          await scheduler.sweep();
        }
      } catch (error) {
        // One bot that cannot start stops start-up: the ones already receiving stop too.
        await Promise.all(leaderships.map((leadership) => leadership.stop().catch(() => undefined)));
        await Promise.all(started.map((bot) => bot.platform.stop().catch(() => undefined)));
        throw error;
      }
      await stopped;
      await Promise.all(
        leaderships.map((leadership) =>
          leadership
            .stop()
            .catch((error: unknown) => logger.warn({ err: error }, "giving up a connection's leadership failed")),
        ),
      );
      await Promise.all(
        options.bots.map((bot) =>
          bot.platform
            .stop()
            .catch((error: unknown) => logger.warn({ err: error, bot: bot.key }, "stopping a channel failed")),
        ),
      );
      // Events handed over before the stop are stored before the chats close.
      await intake;
      const grace = setTimeout(() => stopping.abort(), options.graceMs);
      await Promise.all([...schedulers.values()].map((scheduler) => scheduler.close()));
      await Promise.all(housekeeping);
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

  async function takeIn(bot: GatewayBot, scheduler: ChatScheduler, event: InboundEvent): Promise<void> {
    const { message } = event;
    const decision = bot.access.decide(message);
    // Over the cap: only its ids are kept (a re-delivery is still dropped), never its text;
    // it would reach the model later through the conversation's history.
    const tooLong = decision === "answer" ? overCap(message.text, cap) : undefined;
    const admitted = await store.admit(
      event.dedupKeys,
      decision === "answer" && tooLong === undefined
        ? { botKey: bot.key, chatId: message.chatId, message: JSON.stringify(message) }
        : undefined,
    );
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
      return replyOnly(bot, scheduler, message, options.refusal(message));
    }
    if (tooLong !== undefined) {
      logger.info(
        { ...about, chars: tooLong, maxChars: cap.maxChars },
        "message over MESSAGE_MAX_CHARS; not sent to the model",
      );
      return replyOnly(bot, scheduler, message, cap.reply(tooLong));
    }
    scheduler.poke(message.chatId);
  }

  /** A reply the gateway gives itself, without a turn: stored in the outbox and sent in the chat's order. */
  async function replyOnly(
    bot: GatewayBot,
    scheduler: ChatScheduler,
    message: PlatformMessage,
    reply: string,
  ): Promise<void> {
    await store.storeReply({
      botKey: bot.key,
      chatId: message.chatId,
      parts: bot.platform.split(reply),
      ...replyTarget(message),
    });
    scheduler.poke(message.chatId);
  }

  /** Answers one queued message while this replica holds its chat; the scheduler sends the stored reply next. */
  async function processMessage(
    bot: GatewayBot,
    handler: MessageHandler,
    row: InboxRow,
    lease: ChatLease,
  ): Promise<void> {
    const platformMessage = JSON.parse(row.message) as PlatformMessage;
    const { resumed, attempts } = await options.work.start(row.id);
    if (attempts > MAX_TURN_ATTEMPTS) {
      logger.error(
        { bot: bot.key, chatId: platformMessage.chatId, inboxId: row.id, attempts },
        "a message whose turn kept failing on the store is given up",
      );
      return store.finish(row.id, "failed");
    }
    const message: IncomingMessage = {
      ...platformMessage,
      // Message ids are per bot (two bots in one chat count from the same numbers): the orchestrator's dedupe needs the bot too.
      ...(platformMessage.messageId ? { messageId: `${bot.key}/${platformMessage.messageId}` } : {}),
      ...(resumed ? { resumed: true } : {}),
      agentId: bot.agentId,
      isOperator: bot.access.isOperator(platformMessage.userId),
    };
    if (resumed) {
      logger.info(
        { bot: bot.key, chatId: message.chatId, inboxId: row.id },
        "taking up a message whose turn did not finish",
      );
      // The stopped run's preview says it was interrupted; this turn streams into a new one.
      const left = options.streaming ? await store.streamOf(row.id) : undefined;
      if (left !== undefined) await abandonPreview(bot, row.id, left);
    }
    const preview = openStream(bot, platformMessage, row.id);
    const stopTyping = showTyping(bot.platform, platformMessage);
    const signal = AbortSignal.any([stopping.signal, lease.lost]);
    let reply: string | undefined;
    let editRef: string | undefined;
    try {
      reply = await handler(message, { signal, ...preview?.control });
    } catch (error) {
      // Another replica took the chat over: the message is its now.
      if (lease.lost.aborted) return;
      if (isStoreFailure(error)) {
        // The database failed the turn (down, or a connection lost in a failover): the message stays
        // queued, the chat's work stops here, and the sweep takes it up again (at most MAX_TURN_ATTEMPTS turns).
        logger.error(
          { err: error, bot: bot.key, chatId: message.chatId, inboxId: row.id, attempts },
          "the database failed a turn; the message stays queued",
        );
        await tellDatabaseDown(bot, platformMessage);
        throw error;
      }
      try {
        await store.finish(row.id, "failed");
      } catch (storeError) {
        logger.error(
          { err: storeError, bot: bot.key, chatId: message.chatId, inboxId: row.id },
          "the database does not answer; the message stays queued",
        );
        await tellDatabaseDown(bot, platformMessage);
        throw storeError;
      }
      logger.error({ err: error, bot: bot.key, chatId: message.chatId }, "answering a message failed");
      // No answer follows: the preview says the turn was interrupted.
      const ref = await preview?.stream.close();
      if (ref !== undefined) await abandonPreview(bot, row.id, ref);
      return;
    } finally {
      stopTyping();
      // Waits for a show in flight: the preview's ref is stored before the reply that replaces it.
      editRef = await preview?.stream.close();
    }
    if (lease.lost.aborted) return;
    // Cut short by the end of the grace period: stored by the orchestrator, never sent. Its preview
    // stays stored: the next start marks it interrupted.
    if (stopping.signal.aborted) return store.finish(row.id, "cancelled");
    if (reply === undefined) {
      await store.finish(row.id, "answered");
      if (editRef !== undefined) await abandonPreview(bot, row.id, editRef);
      return;
    }
    const parts = bot.platform.split(reply);
    const kept = await options.transaction(async () => {
      // Fenced: only while the chat's lease is still ours, or a replica that took it over answers twice.
      if (!(await keeper.confirm(lease.name))) return false;
      await store.storeReply({
        botKey: bot.key,
        chatId: message.chatId,
        inboxId: row.id,
        parts,
        ...replyTarget(platformMessage),
        ...(editRef !== undefined ? { editRef } : {}),
      });
      return true;
    });
    toldDatabaseDown.delete(`${bot.key}:${message.chatId}`);
    if (!kept)
      logger.warn(
        { bot: bot.key, chatId: message.chatId, inboxId: row.id },
        "the chat was taken over by another replica before the reply was stored; that replica answers it",
      );
  }

  /**
   * The turn's live preview, where the bot's platform streams: a ReplyStream over the platform's
   * surface, fed by the turn's answer and tool progress; its ref is stored as soon as it appears.
   */
  function openStream(
    bot: GatewayBot,
    message: PlatformMessage,
    inboxId: number,
  ): { stream: ReplyStream; control: Pick<TurnControl, "onAnswer" | "onProgress"> } | undefined {
    const streaming = options.streaming;
    const { platform } = bot;
    if (!streaming?.channels.has(platform.channel) || !platform.openPreview) return undefined;
    const surface = platform.openPreview({
      chatId: message.chatId,
      chatType: message.chatType ?? "group",
      ...replyTarget(message),
    });
    const stream = createReplyStream({
      surface,
      intervalMs: streaming.intervalMs,
      logger: logger.child({ bot: bot.key, chatId: message.chatId, inboxId }),
      onRef: (ref) => store.saveStream({ inboxId, botKey: bot.key, chatId: message.chatId, ref }),
      ...(streaming.timers ? { timers: streaming.timers } : {}),
    });
    return {
      stream,
      control: {
        onAnswer: (text) => stream.answer(text),
        onProgress: (progress) => {
          if (progress.state === "tool") stream.status(streaming.statusText(progress.tool));
        },
      },
    };
  }

  /** A preview no answer will replace: edited to say the turn was interrupted (best effort), and forgotten. */
  async function abandonPreview(bot: GatewayBot, inboxId: number, ref: string): Promise<void> {
    const note = options.streaming?.interruptedText;
    if (note !== undefined && bot.platform.interruptPreview)
      await bot.platform
        .interruptPreview(ref, note)
        .catch((error: unknown) =>
          logger.warn({ err: error, bot: bot.key, inboxId, ref }, "could not mark an interrupted preview"),
        );
    // Kept when the database does not answer: the next start marks it again (an edit to the same note changes nothing).
    await store
      .dropStream(inboxId)
      .catch((error: unknown) => logger.warn({ err: error, bot: bot.key, inboxId }, "could not forget a preview"));
  }

  /** At start-up: previews of messages that were finished without a reply (cancelled by a stop) are marked interrupted. */
  async function markAbandoned(bot: GatewayBot): Promise<void> {
    if (!options.streaming) return;
    try {
      for (const left of await store.abandonedStreams(bot.key)) await abandonPreview(bot, left.inboxId, left.ref);
    } catch (error) {
      logger.warn({ err: error, bot: bot.key }, "could not look for abandoned previews; the next start does");
    }
  }

  /** Once per chat until the database answers again: sent directly, since the outbox is in the database. */
  async function tellDatabaseDown(bot: GatewayBot, message: PlatformMessage): Promise<void> {
    const key = `${bot.key}:${message.chatId}`;
    if (!options.databaseDown || toldDatabaseDown.has(key)) return;
    toldDatabaseDown.add(key);
    await bot.platform
      .send(
        {
          chatId: message.chatId,
          text: options.databaseDown(message),
          ...(message.threadId ? { threadId: message.threadId } : {}),
        },
        `laoding-dbdown-${bot.key}-${message.chatId}-${Date.now()}`.slice(0, 50),
      )
      .catch((error: unknown) =>
        logger.warn({ err: error, bot: bot.key }, "could not tell the chat that the database is down"),
      );
  }

  function showTyping(platform: ChatPlatform, message: PlatformMessage): () => void {
    if (!platform.typing) return () => undefined;
    const typing = () => void platform.typing?.(message.chatId, message.threadId).catch(() => undefined);
    typing();
    const timer = setInterval(typing, options.typingRefreshMs ?? TYPING_REFRESH_MS);
    return () => clearInterval(timer);
  }
}

/** Turns begun on one message before it is given up (a turn that keeps failing on the store). */
export const MAX_TURN_ATTEMPTS = 5;

function replyTarget(message: PlatformMessage): { replyTo?: string; threadId?: string } {
  return {
    ...(message.messageId ? { replyTo: message.messageId } : {}),
    ...(message.threadId ? { threadId: message.threadId } : {}),
  };
}
