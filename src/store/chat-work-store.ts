/**
 * What replicas ask of the channel tables to share the chats: which chats have work that
 * no replica holds, the next message of one chat, and the next reply part to send, claimed
 * so that only one replica sends it. On PostgreSQL the claim skips rows another replica
 * has locked (FOR UPDATE SKIP LOCKED) instead of waiting for them; SQLite has one writer.
 */
import { OUTBOX_COLUMNS, type InboxRow, type OutboxRow } from "./channel-store.js";
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type ChatWorkStore = ReturnType<typeof createChatWorkStore>;

/** The lease name that guards one chat of one bot. */
export const chatLeaseName = (botKey: string, chatId: string) => `chat:${botKey}:${chatId}`;

const UNHELD_CHATS = `SELECT chat_id AS chatId FROM (
    SELECT chat_id FROM channel_inbox WHERE bot_key = ? AND status = 'queued'
    UNION
    SELECT chat_id FROM channel_outbox WHERE bot_key = ? AND status = 'pending'
  ) work
  WHERE NOT EXISTS (SELECT 1 FROM leases WHERE leases.name = CAST(? AS TEXT) || work.chat_id AND leases.expires_at >= ?)
  ORDER BY chat_id`;
const NEXT_QUEUED = `SELECT id, bot_key AS botKey, chat_id AS chatId, message, status, received_at AS receivedAt
  FROM channel_inbox WHERE bot_key = ? AND chat_id = ? AND status = 'queued' ORDER BY id LIMIT 1`;
const HAS_WORK = `SELECT
    (SELECT COUNT(*) FROM channel_inbox WHERE bot_key = ? AND chat_id = ? AND status = 'queued') +
    (SELECT COUNT(*) FROM channel_outbox WHERE bot_key = ? AND chat_id = ? AND status = 'pending') AS work`;
/**
 * The chat's oldest pending part, when it is free, expired or already the holder's: a part
 * claimed by another replica holds back the later ones (parts and replies go out in order),
 * so the candidate is never a later part (nor, on PostgreSQL, one behind a locked part).
 */
const CLAIM_CANDIDATE = `SELECT id FROM channel_outbox
  WHERE id = (SELECT MIN(id) FROM channel_outbox WHERE bot_key = ? AND chat_id = ? AND status = 'pending')
  AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at < ?)`;
const CLAIM = `UPDATE channel_outbox SET claimed_by = ?, claim_expires_at = ? WHERE id = ? AND status = 'pending'
  AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at < ?)`;
const START = `UPDATE channel_inbox SET started_at = COALESCE(started_at, ?), attempts = attempts + 1 WHERE id = ? RETURNING attempts`;
const BY_ID = `SELECT ${OUTBOX_COLUMNS} FROM channel_outbox WHERE id = ?`;

export function createChatWorkStore(sql: SqlDriver, clock: Clock) {
  const candidate = sql.engine === "postgres" ? `${CLAIM_CANDIDATE} FOR UPDATE SKIP LOCKED` : CLAIM_CANDIDATE;
  return {
    /** Chats of a bot with a queued message or an unsent reply part and no live chat lease. */
    async unheldChats(botKey: string): Promise<string[]> {
      const rows = await sql.all<{ chatId: string }>(UNHELD_CHATS, [
        botKey,
        botKey,
        chatLeaseName(botKey, ""),
        clock.now(),
      ]);
      return rows.map((row) => row.chatId);
    },
    /** The oldest message of the chat still waiting for its answer. */
    nextQueued: (botKey: string, chatId: string): Promise<InboxRow | undefined> =>
      sql.get<InboxRow>(NEXT_QUEUED, [botKey, chatId]),
    async hasWork(botKey: string, chatId: string): Promise<boolean> {
      const row = await sql.get<{ work: number }>(HAS_WORK, [botKey, chatId, botKey, chatId]);
      return (row?.work ?? 0) > 0;
    },
    /**
     * Records that a turn begins on the message: `attempts` counts the turns begun on it, so
     * more than one means a run stopped mid-turn (or failed on the store) and this one resumes it.
     */
    async start(inboxId: number): Promise<{ resumed: boolean; attempts: number }> {
      const attempts = (await sql.get<{ attempts: number }>(START, [clock.now(), inboxId]))?.attempts ?? 1;
      return { resumed: attempts > 1, attempts };
    },
    /** Claims the chat's oldest pending part for `holder` until now + claimMs; undefined when none is free. */
    async claimNextPart(
      botKey: string,
      chatId: string,
      holder: string,
      claimMs: number,
    ): Promise<OutboxRow | undefined> {
      return sql.transaction(async () => {
        const now = clock.now();
        const row = await sql.get<{ id: number }>(candidate, [botKey, chatId, holder, now]);
        if (!row) return undefined;
        const { changes } = await sql.run(CLAIM, [holder, now + claimMs, row.id, holder, now]);
        return changes === 1 ? sql.get<OutboxRow>(BY_ID, [row.id]) : undefined;
      });
    },
  };
}
