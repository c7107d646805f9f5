/**
 * One turn at a time per chat, across every replica on the database. A chat's work (its
 * queued messages, then its unsent reply parts) is done by whichever replica holds the
 * chat's lease; chats run in parallel. A replica that takes a message in asks for the
 * chat at once; if another replica holds it, that one finds the message when it looks
 * for its next one. A sweep every third of the lease finds chats whose holder died (its
 * lease expired) or work nobody asked for (left by a stop), so a message is answered
 * within about a lease of its replica's death. Everything is read from the store, never
 * from memory: the store is where replicas meet.
 */
import type { Logger } from "pino";
import type { InboxRow } from "../store/channel-store.js";
import { chatLeaseName, type ChatWorkStore } from "../store/chat-work-store.js";
import type { LeaseKeeper } from "../replica/lease-keeper.js";

export type ChatSchedulerOptions = {
  botKey: string;
  work: ChatWorkStore;
  keeper: LeaseKeeper;
  logger: Logger;
  /** Answers one queued message (its reply stored and delivered, or the row finished). */
  answer(row: InboxRow, lease: ChatLease): Promise<void>;
  /** Sends the chat's pending reply parts; resolves to how many it handled (sent or given up). */
  deliver(chatId: string, lease: ChatLease): Promise<number>;
  /** How often to look for work nobody holds; default a third of the lease. */
  sweepMs?: number;
};

/** The chat's lease while its work runs: `lost` aborts when another replica took it over. */
export type ChatLease = { name: string; lost: AbortSignal };

export type ChatScheduler = {
  /** New work may be in this chat (a message taken in here). */
  poke(chatId: string): void;
  /** Looks for chats with work and no holder now (start-up, and every sweep). */
  sweep(): Promise<void>;
  /** Chats with work running here. */
  readonly busy: number;
  /** Stops starting work; resolves when what runs has finished (or was abandoned by the caller's abort). */
  close(): Promise<void>;
};

/** Passes in a row that got nothing done before a chat is left to the sweep, and the pause between them. */
const IDLE_PASSES = 3;
const IDLE_PAUSE_MS = 100;

export function createChatScheduler(options: ChatSchedulerOptions): ChatScheduler {
  const { botKey, work, keeper, logger } = options;
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  let closed = false;
  let sweeping: Promise<void> | undefined;

  async function runChat(chatId: string): Promise<void> {
    const name = chatLeaseName(botKey, chatId);
    let idlePasses = 0;
    for (;;) {
      again.delete(chatId);
      const lost = new AbortController();
      if (!(await keeper.acquire(name, () => lost.abort(new Error("another replica took this chat over"))))) return;
      const lease: ChatLease = { name, lost: lost.signal };
      let progress = 0;
      try {
        while (!lost.signal.aborted) {
          // Replies of earlier messages go out before the next message is answered; the last
          // answer's reply too while closing (the delivery itself stops when the grace ends).
          progress += await options.deliver(chatId, lease);
          if (closed || lost.signal.aborted) break;
          const row = await work.nextQueued(botKey, chatId);
          if (!row) break;
          await options.answer(row, lease);
          progress += 1;
        }
      } finally {
        if (!lost.signal.aborted)
          await keeper
            .release(name)
            .catch((error: unknown) =>
              logger.warn({ err: error, lease: name }, "could not release a chat lease; it expires by itself"),
            );
      }
      if (closed) return;
      if (again.has(chatId)) continue;
      // Work taken in while the lease was held here, by a replica that could not take it. A pass
      // that got nothing done (a part still claimed by a replica that died) tries a few more
      // times, a moment apart, then leaves the chat to the sweep instead of spinning.
      if (!(await work.hasWork(botKey, chatId))) return;
      idlePasses = progress > 0 ? 0 : idlePasses + 1;
      if (idlePasses > IDLE_PASSES) return;
      if (idlePasses > 0) await new Promise((resolve) => setTimeout(resolve, IDLE_PAUSE_MS));
    }
  }

  function poke(chatId: string): void {
    if (closed) return;
    if (running.has(chatId)) {
      again.add(chatId);
      return;
    }
    const task = runChat(chatId)
      .catch((error: unknown) =>
        logger.error({ err: error, bot: botKey, chatId }, "a chat's work failed; the sweep takes it up again"),
      )
      .finally(() => {
        running.delete(chatId);
        if (again.has(chatId)) poke(chatId);
      });
    running.set(chatId, task);
  }

  async function sweepOnce(): Promise<void> {
    let chats: string[];
    try {
      chats = await work.unheldChats(botKey);
    } catch (error) {
      logger.warn({ err: error, bot: botKey }, "could not look for chats with work; trying again");
      return;
    }
    for (const chatId of chats) if (!running.has(chatId)) poke(chatId);
  }

  const sweep = () => (sweeping ??= sweepOnce().finally(() => (sweeping = undefined)));
  const timer = setInterval(() => void sweep(), options.sweepMs ?? Math.max(100, Math.floor(keeper.ttlMs / 3)));
  timer.unref();

  return {
    poke,
    sweep,
    get busy() {
      return running.size;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await sweeping;
      await Promise.all(running.values());
    },
  };
}
