import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

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

export type MessagesStore = ReturnType<typeof createMessagesStore>;

const COLUMNS = `id, session_id AS sessionId, role, kind, content, tool_calls AS toolCalls,
  tool_call_id AS toolCallId, trace_id AS traceId, user_id AS userId, created_at AS createdAt`;

export function createMessagesStore(db: Db, clock: Clock) {
  const insert = db.prepare(
    `INSERT OR IGNORE INTO messages (session_id, role, kind, content, tool_calls, tool_call_id, trace_id, user_id, dedupe_key, created_at)
     VALUES (@sessionId, @role, @kind, @content, @toolCalls, @toolCallId, @traceId, @userId, @dedupeKey, @createdAt)`,
  );
  const chatAfter = db.prepare<[number, number], MessageRow>(
    `SELECT ${COLUMNS} FROM messages WHERE session_id = ? AND kind = 'chat' AND id > ? ORDER BY id`,
  );
  const bySession = db.prepare<[number], MessageRow>(`SELECT ${COLUMNS} FROM messages WHERE session_id = ? ORDER BY id`);
  const byTrace = db.prepare<[string], MessageRow>(`SELECT ${COLUMNS} FROM messages WHERE trace_id = ? ORDER BY id`);
  const byDedupe = db.prepare<[string], { id: number }>(`SELECT id FROM messages WHERE dedupe_key = ?`);

  return {
    /** Stores a message; returns its id, or undefined when the dedupe key was seen before. */
    append(message: NewMessage): number | undefined {
      const result = insert.run({
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
      return result.changes === 0 ? undefined : Number(result.lastInsertRowid);
    },
    /**
     * Stores a message from another install with its own time (`laoding import go`); the
     * dedupe key makes a second import of the same row a no-op (undefined).
     */
    importRow(message: NewMessage & { createdAt: number; dedupeKey: string }): number | undefined {
      const result = insert.run({
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
      return result.changes === 0 ? undefined : Number(result.lastInsertRowid);
    },
    /** Chat messages of a session after a message id (0 = from the start), oldest first. */
    chatAfter: (sessionId: number, afterId = 0): MessageRow[] => chatAfter.all(sessionId, afterId),
    bySession: (sessionId: number): MessageRow[] => bySession.all(sessionId),
    byTrace: (traceId: string): MessageRow[] => byTrace.all(traceId),
    seen: (dedupeKey: string): boolean => byDedupe.get(dedupeKey) !== undefined,
  };
}
