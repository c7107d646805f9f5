import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type MessageRole = "user" | "assistant" | "tool" | "system";
/** chat: what the user and bot said; scratch: tool calls and results of a turn; command: slash commands. */
export type MessageKind = "chat" | "scratch" | "command";

export type NewMessage = {
  sessionId: number;
  role: MessageRole;
  kind?: MessageKind;
  content: string;
  toolCalls?: unknown;
  toolCallId?: string;
  traceId: string;
  userId?: string;
  /** Channel-level id (channel:chat:message); a second message with the same key is dropped. */
  dedupeKey?: string;
};

export type MessageRow = {
  id: number;
  sessionId: number;
  role: MessageRole;
  kind: MessageKind;
  content: string;
  toolCalls: string | null;
  toolCallId: string | null;
  traceId: string;
  userId: string | null;
  createdAt: number;
};

/** Where a task's user message sits: its chat, and its number among that chat's user chat messages (1 = first). */
export type ChatPlace = { agentId: string; channel: string; chatId: string; sequence: number };

export type MessagesStore = ReturnType<typeof createMessagesStore>;

const COLUMNS = `id, session_id AS sessionId, role, kind, content, tool_calls AS toolCalls,
  tool_call_id AS toolCallId, trace_id AS traceId, user_id AS userId, created_at AS createdAt`;

// The partial unique index messages_dedupe is the only one a new row can hit: no row back means the key was seen.
const INSERT = `INSERT INTO messages (session_id, role, kind, content, tool_calls, tool_call_id, trace_id, user_id, dedupe_key, created_at)
  VALUES (@sessionId, @role, @kind, @content, @toolCalls, @toolCallId, @traceId, @userId, @dedupeKey, @createdAt)
  ON CONFLICT DO NOTHING RETURNING id`;
const CHAT_AFTER = `SELECT ${COLUMNS} FROM messages WHERE session_id = ? AND kind = 'chat' AND id > ? ORDER BY id`;
const BY_SESSION = `SELECT ${COLUMNS} FROM messages WHERE session_id = ? ORDER BY id`;
const BY_TRACE = `SELECT ${COLUMNS} FROM messages WHERE trace_id = ? ORDER BY id`;
// The task's user message, its chat, and how many user chat messages that chat has up to it, across sessions.
const CHAT_PLACE = `SELECT s.agent_id AS agentId, s.channel AS channel, s.chat_id AS chatId,
    (SELECT count(*) FROM messages AS earlier
      WHERE earlier.session_id IN (SELECT es.id FROM sessions AS es
          WHERE es.agent_id = s.agent_id AND es.channel = s.channel AND es.chat_id = s.chat_id)
        AND earlier.id <= m.id AND earlier.role = 'user' AND earlier.kind = 'chat') AS sequence
  FROM messages AS m JOIN sessions AS s ON s.id = m.session_id
  WHERE m.trace_id = ? AND m.role = 'user' AND m.kind = 'chat' ORDER BY m.id LIMIT 1`;
const BY_DEDUPE = `SELECT id FROM messages WHERE dedupe_key = ?`;
const ROW_BY_DEDUPE = `SELECT ${COLUMNS} FROM messages WHERE dedupe_key = ?`;

export function createMessagesStore(sql: SqlDriver, clock: Clock) {
  const insert = async (values: Record<string, string | number | null>): Promise<number | undefined> =>
    (await sql.get<{ id: number }>(INSERT, values))?.id;

  return {
    /** Stores a message; returns its id, or undefined when the dedupe key was seen before. */
    append(message: NewMessage): Promise<number | undefined> {
      return insert({
        sessionId: message.sessionId,
        role: message.role,
        kind: message.kind ?? "chat",
        content: message.content,
        toolCalls: message.toolCalls === undefined ? null : JSON.stringify(message.toolCalls),
        toolCallId: message.toolCallId ?? null,
        traceId: message.traceId,
        userId: message.userId ?? null,
        dedupeKey: message.dedupeKey ?? null,
        createdAt: clock.now(),
      });
    },
    /**
     * Stores a message from another install with its own time (`laoding import go`); the
     * dedupe key makes a second import of the same row a no-op (undefined).
     */
    importRow(message: NewMessage & { createdAt: number; dedupeKey: string }): Promise<number | undefined> {
      return insert({
        sessionId: message.sessionId,
        role: message.role,
        kind: message.kind ?? "chat",
        content: message.content,
        toolCalls: null,
        toolCallId: null,
        traceId: message.traceId,
        userId: message.userId ?? null,
        dedupeKey: message.dedupeKey,
        createdAt: message.createdAt,
      });
    },
    /** Chat messages of a session after a message id (0 = from the start), oldest first. */
    chatAfter: (sessionId: number, afterId = 0): Promise<MessageRow[]> =>
      sql.all<MessageRow>(CHAT_AFTER, [sessionId, afterId]),
    bySession: (sessionId: number): Promise<MessageRow[]> => sql.all<MessageRow>(BY_SESSION, [sessionId]),
    byTrace: (traceId: string): Promise<MessageRow[]> => sql.all<MessageRow>(BY_TRACE, [traceId]),
    /** The place of a turn's user chat message in its chat (the holdout's draw), or undefined when none is stored. */
    chatPlace: async (traceId: string): Promise<ChatPlace | undefined> => {
      const row = await sql.get<ChatPlace>(CHAT_PLACE, [traceId]);
      return row ? { ...row, sequence: Number(row.sequence) } : undefined;
    },
    /** The message stored under a dedupe key (a turn taken up again after its replica stopped finds its own message). */
    byDedupeKey: (dedupeKey: string): Promise<MessageRow | undefined> =>
      sql.get<MessageRow>(ROW_BY_DEDUPE, [dedupeKey]),
    seen: async (dedupeKey: string): Promise<boolean> =>
      (await sql.get<{ id: number }>(BY_DEDUPE, [dedupeKey])) !== undefined,
  };
}
