/**
 * What chat channels keep across restarts: the platform event ids already taken in (a
 * re-delivery within the window is dropped), the inbox of messages accepted for an
 * answer, and the outbox of replies stored before they are sent. Taking a message in
 * (seen keys + inbox row) and storing its reply (outbox rows + inbox done) are each one
 * transaction, so a crash leaves either all of a step or none of it.
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type InboxStatus = "queued" | "answered" | "cancelled" | "failed";
export type OutboxStatus = "pending" | "sent" | "failed";

export type InboxRow = {
  id: number;
  botKey: string;
  chatId: string;
  message: string;
  status: InboxStatus;
  receivedAt: number;
};

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
  /** The live preview this part replaces (PreviewSurface.ref); only ever on a reply's first part. */
  editRef: string | null;
};

export type NewReply = {
  botKey: string;
  chatId: string;
  inboxId?: number;
  parts: string[];
  replyTo?: string;
  threadId?: string;
  /** The turn's live preview: its first part edits it into the final answer. */
  editRef?: string;
};

/** A turn's live preview, stored the moment it appeared (channel_streams). */
export type StreamRow = { inboxId: number; botKey: string; chatId: string; ref: string; createdAt: number };

export type ChannelStore = ReturnType<typeof createChannelStore>;

/** Platforms re-deliver for hours (Feishu's last retry comes after 6 h): remember ids for 12 h. */
export const CHANNEL_DEDUP_WINDOW_MS = 12 * 60 * 60 * 1000;

/** An outbox row as OutboxRow (chat-work-store.ts reads the rows it claims with these too). */
export const OUTBOX_COLUMNS = `id, bot_key AS botKey, chat_id AS chatId, inbox_id AS inboxId, part, parts, text, reply_to AS replyTo,
  thread_id AS threadId, status, attempts, last_error AS lastError, platform_message_id AS platformMessageId,
  created_at AS createdAt, sent_at AS sentAt, edit_ref AS editRef`;

const PRUNE_SEEN = `DELETE FROM channel_seen WHERE seen_at < ?`;
/**
 * The arbiter of a key: inserted when new, taken over when its last sighting is outside the
 * window, left alone (no change) when it was seen within the window. Two replicas admitting
 * the same key at once meet on the key's row: the second waits for the first to commit and
 * then finds the key fresh, so exactly one of them takes the event in.
 */
const CLAIM_SEEN = `INSERT INTO channel_seen (key, seen_at) VALUES (?, ?)
  ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at WHERE channel_seen.seen_at <= ?`;
/** A key seen within the window is remembered again from now (the window slides, as it always did). */
const RESEE = `UPDATE channel_seen SET seen_at = ? WHERE key = ? AND seen_at < ?`;
const INSERT_INBOX = `INSERT INTO channel_inbox (bot_key, chat_id, message, status, received_at) VALUES (?, ?, ?, 'queued', ?) RETURNING id`;
const FINISH_INBOX = `UPDATE channel_inbox SET status = ?, finished_at = ? WHERE id = ?`;
const QUEUED_INBOX = `SELECT id, bot_key AS botKey, chat_id AS chatId, message, status, received_at AS receivedAt FROM channel_inbox WHERE bot_key = ? AND status = 'queued' ORDER BY id`;
const INSERT_OUTBOX = `INSERT INTO channel_outbox (bot_key, chat_id, inbox_id, part, parts, text, reply_to, thread_id, edit_ref, status, created_at)
  VALUES (@botKey, @chatId, @inboxId, @part, @parts, @text, @replyTo, @threadId, @editRef, 'pending', @createdAt) RETURNING id`;
const PENDING_OF_CHAT = `SELECT ${OUTBOX_COLUMNS} FROM channel_outbox WHERE bot_key = ? AND chat_id = ? AND status = 'pending' ORDER BY id`;
const PENDING_CHATS = `SELECT DISTINCT chat_id AS chatId FROM channel_outbox WHERE bot_key = ? AND status = 'pending' ORDER BY chat_id`;
const OUTBOX_BY_ID = `SELECT ${OUTBOX_COLUMNS} FROM channel_outbox WHERE id = ?`;
const COUNT_ATTEMPT = `UPDATE channel_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ? AND status = 'pending'`;
const MARK_SENT = `UPDATE channel_outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?, platform_message_id = ?, last_error = NULL WHERE id = ? AND status = 'pending'`;
const MARK_FAILED = `UPDATE channel_outbox SET status = 'failed', last_error = ? WHERE id = ? AND status = 'pending'`;
const SAVE_STREAM = `INSERT INTO channel_streams (inbox_id, bot_key, chat_id, ref, created_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (inbox_id) DO UPDATE SET bot_key = excluded.bot_key, chat_id = excluded.chat_id, ref = excluded.ref, created_at = excluded.created_at`;
const STREAM_OF = `SELECT ref FROM channel_streams WHERE inbox_id = ?`;
const DROP_STREAM = `DELETE FROM channel_streams WHERE inbox_id = ?`;
/** Previews whose message will never be taken up again (cancelled by a stop, failed): nothing will replace them. */
const ABANDONED_STREAMS = `SELECT s.inbox_id AS inboxId, s.bot_key AS botKey, s.chat_id AS chatId, s.ref, s.created_at AS createdAt
  FROM channel_streams s JOIN channel_inbox i ON i.id = s.inbox_id WHERE s.bot_key = ? AND i.status <> 'queued' ORDER BY s.inbox_id`;

export function createChannelStore(
  sql: SqlDriver,
  clock: Clock,
  options: { dedupWindowMs: number } = { dedupWindowMs: CHANNEL_DEDUP_WINDOW_MS },
) {
  let lastPruneAt = 0;

  const admit = async (
    keys: string[],
    inbox: { botKey: string; chatId: string; message: string } | undefined,
  ): Promise<{ duplicate: true } | { duplicate: false; inboxId?: number }> => {
    const now = clock.now();
    const cutoff = now - options.dedupWindowMs;
    if (now - lastPruneAt > options.dedupWindowMs / 12) {
      lastPruneAt = now;
      // Housekeeping of its own, before the admission: only keys outside the window go, and it holds no key's row while the admission runs.
      await sql.run(PRUNE_SEEN, [cutoff]);
    }
    // Each key once, in one order for every caller: two admissions sharing keys lock them in the same order and cannot deadlock.
    const distinct = [...new Set(keys)].sort();
    return sql.transaction(async () => {
      let duplicate = false;
      // Every key is remembered, also on a duplicate: a message re-sent under a new event id is still caught by its message id.
      for (const key of distinct) {
        const claimed = (await sql.run(CLAIM_SEEN, [key, now, cutoff])).changes === 1;
        if (!claimed) {
          duplicate = true;
          await sql.run(RESEE, [now, key, now]);
        }
      }
      if (duplicate) return { duplicate: true } as const;
      if (!inbox) return { duplicate: false } as const;
      const row = (await sql.get<{ id: number }>(INSERT_INBOX, [inbox.botKey, inbox.chatId, inbox.message, now])) as {
        id: number;
      };
      return { duplicate: false, inboxId: row.id } as const;
    });
  };

  const storeReply = (reply: NewReply): Promise<number[]> =>
    sql.transaction(async () => {
      const now = clock.now();
      const ids: number[] = [];
      for (const [index, text] of reply.parts.entries()) {
        const row = (await sql.get<{ id: number }>(INSERT_OUTBOX, {
          botKey: reply.botKey,
          chatId: reply.chatId,
          inboxId: reply.inboxId ?? null,
          part: index + 1,
          parts: reply.parts.length,
          text,
          replyTo: reply.replyTo ?? null,
          threadId: reply.threadId ?? null,
          editRef: index === 0 ? (reply.editRef ?? null) : null,
          createdAt: now,
        })) as { id: number };
        ids.push(row.id);
      }
      if (reply.inboxId !== undefined) {
        await sql.run(FINISH_INBOX, ["answered", now, reply.inboxId]);
        // The preview now belongs to the reply's first part (edit_ref): no run marks it interrupted.
        await sql.run(DROP_STREAM, [reply.inboxId]);
      }
      return ids;
    });

  return {
    /**
     * Takes an event in: false-y `duplicate` when none of its keys was seen within the
     * window. With `inbox`, the message is queued for an answer in the same transaction.
     */
    admit: (keys: string[], inbox?: { botKey: string; chatId: string; message: string }) => admit(keys, inbox),
    /** Messages taken in but not answered yet (the bot stopped first), oldest first. */
    queued: (botKey: string): Promise<InboxRow[]> => sql.all<InboxRow>(QUEUED_INBOX, [botKey]),
    finish: async (inboxId: number, status: Exclude<InboxStatus, "queued">): Promise<void> => {
      await sql.run(FINISH_INBOX, [status, clock.now(), inboxId]);
    },
    /**
     * Stores a reply (one row per part, `editRef` on the first) and marks its message answered;
     * the message's stream row goes in the same transaction. Returns the outbox ids.
     */
    storeReply: (reply: NewReply): Promise<number[]> => storeReply(reply),
    pendingOf: (botKey: string, chatId: string): Promise<OutboxRow[]> =>
      sql.all<OutboxRow>(PENDING_OF_CHAT, [botKey, chatId]),
    chatsWithPending: async (botKey: string): Promise<string[]> =>
      (await sql.all<{ chatId: string }>(PENDING_CHATS, [botKey])).map((row) => row.chatId),
    outbox: (id: number): Promise<OutboxRow | undefined> => sql.get<OutboxRow>(OUTBOX_BY_ID, [id]),
    attemptFailed: async (id: number, reason: string): Promise<void> => {
      await sql.run(COUNT_ATTEMPT, [reason, id]);
    },
    sent: async (id: number, platformMessageId: string | undefined): Promise<void> => {
      await sql.run(MARK_SENT, [clock.now(), platformMessageId ?? null, id]);
    },
    failed: async (id: number, reason: string): Promise<void> => {
      await sql.run(MARK_FAILED, [reason, id]);
    },
    /** Remembers the live preview of the turn answering `inboxId` (replaces one stored before). */
    saveStream: async (stream: { inboxId: number; botKey: string; chatId: string; ref: string }): Promise<void> => {
      await sql.run(SAVE_STREAM, [stream.inboxId, stream.botKey, stream.chatId, stream.ref, clock.now()]);
    },
    /** The preview a turn on `inboxId` left behind (a run stopped mid-stream), if any. */
    streamOf: async (inboxId: number): Promise<string | undefined> =>
      (await sql.get<{ ref: string }>(STREAM_OF, [inboxId]))?.ref,
    dropStream: async (inboxId: number): Promise<void> => {
      await sql.run(DROP_STREAM, [inboxId]);
    },
    /** A bot's previews whose message is finished without a reply (cancelled, failed): marked interrupted at start-up. */
    abandonedStreams: (botKey: string): Promise<StreamRow[]> => sql.all<StreamRow>(ABANDONED_STREAMS, [botKey]),
  };
}
