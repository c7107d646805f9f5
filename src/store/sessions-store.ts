import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

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

export function createSessionsStore(db: Db, clock: Clock) {
  const findActive = db.prepare<[string, string, string], SessionRow>(
    `SELECT ${COLUMNS} FROM sessions WHERE agent_id = ? AND channel = ? AND chat_id = ? AND status = 'active'`,
  );
  const byId = db.prepare<[number], SessionRow>(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`);
  const insert = db.prepare(
    `INSERT INTO sessions (agent_id, channel, chat_id, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)`,
  );
  const close = db.prepare(`UPDATE sessions SET status = 'closed', updated_at = ? WHERE id = ? AND status = 'active'`);
  const summary = db.prepare(`UPDATE sessions SET summary = ?, summary_until_message_id = ?, updated_at = ? WHERE id = ?`);

  const getOrCreate = db.transaction((agentId: string, channel: string, chatId: string): SessionRow => {
    const existing = findActive.get(agentId, channel, chatId);
    if (existing) return existing;
    const now = clock.now();
    const id = Number(insert.run(agentId, channel, chatId, now, now).lastInsertRowid);
    return byId.get(id) as SessionRow;
  });

  const insertImported = db.prepare(`INSERT INTO sessions (agent_id, channel, chat_id, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`);
  const countMessages = db.prepare<[number], { count: number }>(`SELECT count(*) AS count FROM messages WHERE session_id = ?`);

  return {
    /** The chat's active session, if it has one (nothing is created). */
    findActive: (agentId: string, channel: string, chatId: string): SessionRow | undefined => findActive.get(agentId, channel, chatId),
    /**
     * A session for history imported from another install, with that history's times:
     * active (the chat continues in it) or closed (kept for history, when the chat already
     * has an active session of its own).
     */
    createImported: (session: { agentId: string; channel: string; chatId: string; status: SessionRow["status"]; createdAt: number; updatedAt: number }): SessionRow => {
      const id = Number(insertImported.run(session.agentId, session.channel, session.chatId, session.status, session.createdAt, session.updatedAt).lastInsertRowid);
      return byId.get(id) as SessionRow;
    },
    messageCount: (id: number): number => countMessages.get(id)?.count ?? 0,
    /** The chat's active session, created when there is none. */
    activeSession: (agentId: string, channel: string, chatId: string): SessionRow => getOrCreate(agentId, channel, chatId),
    get: (id: number): SessionRow | undefined => byId.get(id),
    /** Closes the active session (kept for history); the next message opens a new one. */
    closeActive: db.transaction((agentId: string, channel: string, chatId: string): SessionRow | undefined => {
      const existing = findActive.get(agentId, channel, chatId);
      if (existing) close.run(clock.now(), existing.id);
      return existing;
    }),
    setSummary: (id: number, text: string, untilMessageId: number): void => {
      summary.run(text, untilMessageId, clock.now(), id);
    },
  };
}
