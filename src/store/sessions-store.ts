import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type SessionRow = {
  id: number;
  agentId: string;
  channel: string;
  chatId: string;
  status: "active" | "closed";
  summary: string | null;
  summaryUntilMessageId: number | null;
  createdAt: number;
  updatedAt: number;
};

export type SessionsStore = ReturnType<typeof createSessionsStore>;

const COLUMNS = `id, agent_id AS agentId, channel, chat_id AS chatId, status, summary,
  summary_until_message_id AS summaryUntilMessageId, created_at AS createdAt, updated_at AS updatedAt`;

const FIND_ACTIVE = `SELECT ${COLUMNS} FROM sessions WHERE agent_id = ? AND channel = ? AND chat_id = ? AND status = 'active'`;
const BY_ID = `SELECT ${COLUMNS} FROM sessions WHERE id = ?`;
// The partial unique index sessions_one_active arbitrates: a replica that loses the race inserts nothing and reads the winner's row.
const INSERT_ACTIVE = `INSERT INTO sessions (agent_id, channel, chat_id, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)
  ON CONFLICT DO NOTHING RETURNING id`;
const CLOSE = `UPDATE sessions SET status = 'closed', updated_at = ? WHERE id = ? AND status = 'active'`;
const SET_SUMMARY = `UPDATE sessions SET summary = ?, summary_until_message_id = ?, updated_at = ? WHERE id = ?`;
const INSERT_IMPORTED = `INSERT INTO sessions (agent_id, channel, chat_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`;
const COUNT_MESSAGES = `SELECT count(*) AS count FROM messages WHERE session_id = ?`;

export function createSessionsStore(sql: SqlDriver, clock: Clock) {
  const findActive = (agentId: string, channel: string, chatId: string) =>
    sql.get<SessionRow>(FIND_ACTIVE, [agentId, channel, chatId]);
  const byId = (id: number) => sql.get<SessionRow>(BY_ID, [id]);

  const getOrCreate = (agentId: string, channel: string, chatId: string): Promise<SessionRow> =>
    sql.transaction(async () => {
      const existing = await findActive(agentId, channel, chatId);
      if (existing) return existing;
      const now = clock.now();
      const inserted = await sql.get<{ id: number }>(INSERT_ACTIVE, [agentId, channel, chatId, now, now]);
      if (inserted) return (await byId(inserted.id)) as SessionRow;
      // Another replica opened the chat's session between the read and the insert.
      return (await findActive(agentId, channel, chatId)) as SessionRow;
    });

  return {
    /** The chat's active session, if it has one (nothing is created). */
    findActive: (agentId: string, channel: string, chatId: string): Promise<SessionRow | undefined> =>
      findActive(agentId, channel, chatId),
    /**
     * A session for history imported from another install, with that history's times:
     * active (the chat continues in it) or closed (kept for history, when the chat already
     * has an active session of its own).
     */
    createImported: async (session: {
      agentId: string;
      channel: string;
      chatId: string;
      status: SessionRow["status"];
      createdAt: number;
      updatedAt: number;
    }): Promise<SessionRow> => {
      const inserted = (await sql.get<{ id: number }>(INSERT_IMPORTED, [
        session.agentId,
        session.channel,
        session.chatId,
        session.status,
        session.createdAt,
        session.updatedAt,
      ])) as { id: number };
      return (await byId(inserted.id)) as SessionRow;
    },
    messageCount: async (id: number): Promise<number> =>
      (await sql.get<{ count: number }>(COUNT_MESSAGES, [id]))?.count ?? 0,
    /** The chat's active session, created when there is none. */
    activeSession: (agentId: string, channel: string, chatId: string): Promise<SessionRow> =>
      getOrCreate(agentId, channel, chatId),
    get: (id: number): Promise<SessionRow | undefined> => byId(id),
    /** Closes the active session (kept for history); the next message opens a new one. */
    closeActive: (agentId: string, channel: string, chatId: string): Promise<SessionRow | undefined> =>
      sql.transaction(async () => {
        const existing = await findActive(agentId, channel, chatId);
        if (existing) await sql.run(CLOSE, [clock.now(), existing.id]);
        return existing;
      }),
    setSummary: async (id: number, text: string, untilMessageId: number): Promise<void> => {
      await sql.run(SET_SUMMARY, [text, untilMessageId, clock.now(), id]);
    },
  };
}
