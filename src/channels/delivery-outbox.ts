/**
 * Sends stored replies. A reply part is a row in the outbox before anything is sent; it
 * is marked sent when the platform acknowledges it, so a restart sends exactly what was
 * not acknowledged (at-least-once where the platform has no idempotency key: Telegram;
 * Feishu sends carry the row's uuid). A failed send is retried with back-off, honouring
 * the platform's retry-after, and finally recorded as failed with the reason.
 */
import type { Logger } from "pino";
import type { ChannelStore, OutboxRow } from "../store/channel-store.js";
import type { ChatWorkStore } from "../store/chat-work-store.js";
import { DeliveryError, type ChatPlatform } from "./chat-platform.js";

export const DEFAULT_MAX_SEND_ATTEMPTS = 6;
export const DEFAULT_RETRY_BASE_MS = 1_000;
export const DEFAULT_RETRY_MAX_MS = 60_000;

export type DeliveryOutboxOptions = {
  store: ChannelStore;
  /** Claims each part before it is sent, so one replica sends it. */
  work: ChatWorkStore;
  /** This replica's name (the claim's holder). */
  holder: string;
  /** How long a claim lasts (REPLICA_LEASE_MS): a replica that dies mid-send frees its part after it. */
  claimMs: number;
  botKey: string;
  platform: Pick<ChatPlatform, "send">;
  logger: Logger;
  maxAttempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Aborted when the bot stops: waits for a retry end, the row stays pending for the next start. */
  stopping: AbortSignal;
};

export type DeliveryOutbox = {
  /**
   * Sends every pending part of one chat, oldest first; stops early when `lost` aborts
   * (another replica took the chat). Resolves to how many parts it handled (sent or failed).
   */
  deliverChat(chatId: string, lost?: AbortSignal): Promise<number>;
  /** Chats with parts still pending (left by a previous run). */
  chatsWithPending(): Promise<string[]>;
};

export function createDeliveryOutbox(options: DeliveryOutboxOptions): DeliveryOutbox {
  const { store, botKey, logger } = options;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_SEND_ATTEMPTS;
  const baseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
  const maxMs = options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS;

  async function deliver(row: OutboxRow): Promise<void> {
    let attempts = row.attempts;
    while (!options.stopping.aborted) {
      const idempotencyKey = `laoding-${botKey}-${row.id}`.slice(0, 50);
      try {
        const result = await options.platform.send(
          {
            chatId: row.chatId,
            text: row.text,
            ...(row.replyTo ? { replyTo: row.replyTo } : {}),
            ...(row.threadId ? { threadId: row.threadId } : {}),
            // The turn's live preview: the platform edits it into this part (only ever the first).
            ...(row.editRef && row.part === 1 ? { editRef: row.editRef } : {}),
          },
          idempotencyKey,
        );
        await store.sent(row.id, result.messageId);
        return;
      } catch (error) {
        attempts += 1;
        const reason = describe(error);
        const retryable = error instanceof DeliveryError ? error.retryable : false;
        if (!retryable || attempts >= maxAttempts) {
          await store.failed(row.id, `${reason} (after ${attempts} attempt${attempts === 1 ? "" : "s"})`);
          logger.error(
            { botKey, chatId: row.chatId, outboxId: row.id, attempts, reason },
            "reply could not be delivered; recorded as failed",
          );
          return;
        }
        await store.attemptFailed(row.id, reason);
        const backoffMs = Math.min(maxMs, baseMs * 2 ** (attempts - 1));
        const waitMs = Math.max(backoffMs, error instanceof DeliveryError ? (error.retryAfterMs ?? 0) : 0);
        logger.warn(
          { botKey, chatId: row.chatId, outboxId: row.id, attempts, waitMs, reason },
          "send failed; retrying",
        );
        await sleep(waitMs, options.stopping);
      }
    }
  }

  return {
    async deliverChat(chatId, lost) {
      let handled = 0;
      while (!options.stopping.aborted && !lost?.aborted) {
        const row = await options.work.claimNextPart(botKey, chatId, options.holder, options.claimMs);
        if (!row) break;
        await deliver(row);
        // Still pending after its attempts (the bot is stopping): the next run sends it.
        if (options.stopping.aborted) break;
        handled += 1;
      }
      return handled;
    },
    chatsWithPending: () => store.chatsWithPending(botKey),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
