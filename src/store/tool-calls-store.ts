/**
 * The audit trail of tool calls. A call's row is queued and the queue is written in one
 * transaction a few milliseconds later (a commit per call was the largest single cost of
 * a fast tool call in the parent: at thousands of calls a second, a commit per call is
 * thousands of WAL appends). Nothing is lost: a read of the trail, `flush()`, the store's
 * close and the process's exit write the queue first, and a full queue is written at once.
 */
import type { ToolCallAudit } from "../toolhost/client/toolhost-client.js";
import type { Clock } from "./clock.js";
import type { Db } from "./open-database.js";

/** The toolhost client's audit record is what this table stores: one definition. */
export type ToolCallRecord = ToolCallAudit;

export type ToolCallRow = Required<Omit<ToolCallRecord, "ok">> & { id: number; ok: number; createdAt: number };

export type ToolCallsStore = ReturnType<typeof createToolCallsStore>;

/** Schedules the flush of the queue (tests pass their own). */
export type FlushScheduler = (flush: () => void) => void;

/** How long a row may wait for others to share its transaction. */
const FLUSH_DELAY_MS = 10;
/** A queue this long is written at once, without waiting for the delay. */
const FLUSH_AT_ROWS = 500;
/** Rows per INSERT statement: one statement for many rows is a fraction of the binding and stepping of one each. */
const ROWS_PER_INSERT = 64;
/** Rows kept while the database refuses them; older ones are dropped past this. */
const MAX_QUEUED = 10_000;

const afterDelay: FlushScheduler = (flush) => void setTimeout(flush, FLUSH_DELAY_MS);

export function createToolCallsStore(db: Db, clock: Clock, schedule: FlushScheduler = afterDelay) {
  const inserts = new Map<number, ReturnType<Db["prepare"]>>();
  /** The INSERT of `count` rows, prepared once per count. */
  const insertOf = (count: number) => {
    let statement = inserts.get(count);
    if (!statement) {
      const values = Array.from({ length: count }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
      statement = db.prepare(`INSERT INTO tool_calls (trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at) VALUES ${values}`);
      inserts.set(count, statement);
    }
    return statement;
  };
  const byTrace = db.prepare<[string], ToolCallRow>(
    `SELECT id, trace_id AS traceId, agent_id AS agentId, session_id AS sessionId, tool, args_digest AS argsDigest, ok,
       error_code AS errorCode, duration_ms AS durationMs, created_at AS createdAt
     FROM tool_calls WHERE trace_id = ? ORDER BY id`,
  );
  type Queued = { call: ToolCallRecord; at: number };
  let queue: Queued[] = [];
  let scheduled = false;
  let reportError: (error: unknown, rows: number) => void = () => undefined;
  const writeAll = db.transaction((rows: Queued[]) => {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const values: unknown[] = [];
      for (const { call, at } of chunk) {
        values.push(call.traceId ?? null, call.agentId, call.sessionId ?? null, call.tool, call.argsDigest, call.ok ? 1 : 0, call.errorCode ?? null, Math.round(call.durationMs), at);
      }
      insertOf(chunk.length).run(values);
    }
  });
  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0 || !db.open) return;
    const rows = queue;
    queue = [];
    try {
      writeAll(rows);
    } catch (error) {
      // The transaction rolled back: keep the rows (bounded) for the next flush, and say so.
      queue = rows.concat(queue).slice(-MAX_QUEUED);
      throw error;
    }
  };
  const flushReporting = (): void => {
    try {
      flush();
    } catch (error) {
      // Kept in the queue: the next flush tries again.
      reportError(error, queue.length);
    }
  };
  return {
    /** Queues the row; it is written with the others queued by then, in one transaction. */
    record(call: ToolCallRecord): void {
      queue.push({ call, at: clock.now() });
      if (queue.length % FLUSH_AT_ROWS === 0) return flushReporting();
      if (scheduled) return;
      scheduled = true;
      schedule(flushReporting);
    },
    /** Who hears of a flush that failed on its own turn (the rows stay queued for the next try). */
    onFlushError(handler: (error: unknown, rows: number) => void): void {
      reportError = handler;
    },
    /** Writes every queued row now (the store's close and every read of the trail do). */
    flush,
    get pending(): number {
      return queue.length;
    },
    byTrace: (traceId: string): ToolCallRow[] => {
      flush();
      return byTrace.all(traceId);
    },
  };
}
