/**
 * What chat channels keep across restarts: the platform event ids already taken in (a
 * re-delivery within the window is dropped), the inbox of messages accepted for an
 * answer, and the outbox of replies stored before they are sent. Taking a message in
 * (seen keys + inbox row) and storing its reply (outbox rows + inbox done) are each one
 * transaction, so a crash leaves either all of a step or none of it.
 */
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

export type InboxStatus = "queued" | "answered" | "cancelled" | "failed";
export type OutboxStatus = "pending" | "sent" | "failed";

export type InboxRow = { id: number; botKey: string; chatId: string; message: string; status: InboxStatus; receivedAt: number };

export type OutboxRow = {
  id: number;
  botKey: string;
  chatId: string;
  inboxId: number | null;
  part: number;
  parts: number;
  text: string;
  replyTo: string | null;
  threadId: string | null;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  platformMessageId: string | null;
  createdAt: number;
  sentAt: number | null;
};

export type NewReply = { botKey: string; chatId: string; inboxId?: number; parts: string[]; replyTo?: string; threadId?: string };

export type ChannelStore = ReturnType<typeof createChannelStore>;

/** Platforms re-deliver for hours (Feishu's last retry comes after 6 h): remember ids for 12 h. */
export const CHANNEL_DEDUP_WINDOW_MS = 12 * 60 * 60 * 1000;

const OUTBOX_COLUMNS = `id, bot_key AS botKey, chat_id AS chatId, inbox_id AS inboxId, part, parts, text, reply_to AS replyTo,
  thread_id AS threadId, status, attempts, last_error AS lastError, platform_message_id AS platformMessageId,
  created_at AS createdAt, sent_at AS sentAt`;

export function createChannelStore(db: Db, clock: Clock, options: { dedupWindowMs: number } = { dedupWindowMs: CHANNEL_DEDUP_WINDOW_MS }) {
  const seenAt = db.prepare<[string], { seenAt: number }>(`SELECT seen_at AS seenAt FROM channel_seen WHERE key = ?`);
  const markSeen = db.prepare(`INSERT INTO channel_seen (key, seen_at) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at`);
  const pruneSeen = db.prepare(`DELETE FROM channel_seen WHERE seen_at < ?`);
  const insertInbox = db.prepare(`INSERT INTO channel_inbox (bot_key, chat_id, message, status, received_at) VALUES (?, ?, ?, 'queued', ?)`);
  const finishInbox = db.prepare(`UPDATE channel_inbox SET status = ?, finished_at = ? WHERE id = ?`);
  const queuedInbox = db.prepare<[string], InboxRow>(
    `SELECT id, bot_key AS botKey, chat_id AS chatId, message, status, received_at AS receivedAt FROM channel_inbox WHERE bot_key = ? AND status = 'queued' ORDER BY id`,
  );
  const insertOutbox = db.prepare(
    `INSERT INTO channel_outbox (bot_key, chat_id, inbox_id, part, parts, text, reply_to, thread_id, status, created_at)
     VALUES (@botKey, @chatId, @inboxId, @part, @parts, @text, @replyTo, @threadId, 'pending', @createdAt)`,
  );
  const pendingOfChat = db.prepare<[string, string], OutboxRow>(`SELECT ${OUTBOX_COLUMNS} FROM channel_outbox WHERE bot_key = ? AND chat_id = ? AND status = 'pending' ORDER BY id`);
  const pendingChats = db.prepare<[string], { chatId: string }>(`SELECT DISTINCT chat_id AS chatId FROM channel_outbox WHERE bot_key = ? AND status = 'pending' ORDER BY chat_id`);
  const outboxById = db.prepare<[number], OutboxRow>(`SELECT ${OUTBOX_COLUMNS} FROM channel_outbox WHERE id = ?`);
  const countAttempt = db.prepare(`UPDATE channel_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ? AND status = 'pending'`);
  const markSent = db.prepare(`UPDATE channel_outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?, platform_message_id = ?, last_error = NULL WHERE id = ? AND status = 'pending'`);
  const markFailed = db.prepare(`UPDATE channel_outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'`);

  let lastPruneAt = 0;
  const fresh = (key: string, now: number) => {
    const row = seenAt.get(key);
    return row !== undefined && row.seenAt > now - options.dedupWindowMs;
  };

  const admit = db.transaction((keys: string[], inbox: { botKey: string; chatId: string; message: string } | undefined): { duplicate: true } | { duplicate: false; inboxId?: number } => {
    const now = clock.now();
    if (now - lastPruneAt > options.dedupWindowMs / 12) {
      pruneSeen.run(now - options.dedupWindowMs);
      lastPruneAt = now;
    }
    const duplicate = keys.some((key) => fresh(key, now));
    // Every key is remembered, also on a duplicate: a message re-sent under a new event id is still caught by its message id.
    for (const key of keys) markSeen.run(key, now);
    if (duplicate) return { duplicate: true };
    if (!inbox) return { duplicate: false };
    return { duplicate: false, inboxId: Number(insertInbox.run(inbox.botKey, inbox.chatId, inbox.message, now).lastInsertRowid) };
  });

  const storeReply = db.transaction((reply: NewReply): number[] => {
    const now = clock.now();
    const ids = reply.parts.map((text, index) =>
      Number(
        insertOutbox.run({
          botKey: reply.botKey,
          chatId: reply.chatId,
          inboxId: reply.inboxId ?? null,
          part: index + 1,
          parts: reply.parts.length,
          text,
          replyTo: reply.replyTo ?? null,
          threadId: reply.threadId ?? null,
          createdAt: now,
        }).lastInsertRowid,
      ),
    );
    if (reply.inboxId !== undefined) finishInbox.run("answered", now, reply.inboxId);
    return ids;
  });

  return {
    /**
     * Takes an event in: false-y `duplicate` when none of its keys was seen within the
     * window. With `inbox`, the message is queued for an answer in the same transaction.
     */
    admit: (keys: string[], inbox?: { botKey: string; chatId: string; message: string }) => admit(keys, inbox),
    /** Messages taken in but not answered yet (the bot stopped first), oldest first. */
    queued: (botKey: string): InboxRow[] => queuedInbox.all(botKey),
    finish: (inboxId: number, status: Exclude<InboxStatus, "queued">) => void finishInbox.run(status, clock.now(), inboxId),
    /** Stores a reply (one row per part) and marks its message answered; returns the outbox ids. */
    storeReply: (reply: NewReply): number[] => storeReply(reply),
    pendingOf: (botKey: string, chatId: string): OutboxRow[] => pendingOfChat.all(botKey, chatId),
    chatsWithPending: (botKey: string): string[] => pendingChats.all(botKey).map((row) => row.chatId),
    outbox: (id: number): OutboxRow | undefined => outboxById.get(id),
    attemptFailed: (id: number, reason: string) => void countAttempt.run(reason, id),
    sent: (id: number, platformMessageId: string | undefined) => void markSent.run(clock.now(), platformMessageId ?? null, id),
    failed: (id: number, reason: string) => void markFailed.run(reason, id),
  };
}
