/**
 * The audit trail of tool calls. A call's row is committed before its caller gets the
 * result (`record` resolves then): a result someone saw always has its row, whatever
 * crashes next. Rows recorded in the same turn of the event loop share one transaction
 * (group commit), written when the turn's I/O has been handled: a commit costs 30-60 µs
 * on the bench machine's disk whatever it holds, so answers that arrive together pay for one.
 * A read of the trail, `flush()`, the store's close and the process's exit write the
 * queue first, and a full queue is written at once.
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

/** A queue this long is written at once, without waiting for the turn to end. */
const FLUSH_AT_ROWS = 500;
/** Rows per INSERT statement: one statement for many rows is a fraction of the binding and stepping of one each. */
const ROWS_PER_INSERT = 64;
/** Rows kept after the database refused them (their callers were told); older ones are dropped past this. */
const MAX_KEPT = 10_000;
/** A kept row is given up after this many refused transactions (a row that cannot be written must not be tried forever). */
const MAX_TRIES = 3;

/** What a failed write did with its rows: refused in this transaction, kept for another try, given up. */
export type FlushFailure = { refused: number; kept: number; dropped: number };

/** After the I/O callbacks of this turn of the event loop: every answer read in it has queued its row by then. */
const endOfTurn: FlushScheduler = (flush) => void setImmediate(flush);

export function createToolCallsStore(db: Db, clock: Clock, schedule: FlushScheduler = endOfTurn) {
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
  type Row = { call: ToolCallRecord; at: number };
  /** Rows whose callers wait for their commit. */
  const queue: (Row & { settle: (error?: Error) => void })[] = [];
  /** Rows refused before: their callers were told; each is tried again, apart, with the next flushes. */
  let kept: (Row & { tries: number })[] = [];
  let scheduled = false;
  let reportError: (error: unknown, failure: FlushFailure) => void = () => undefined;
  const writeAll = db.transaction((rows: Row[]) => {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const values: unknown[] = [];
      for (const { call, at } of chunk) {
        values.push(call.traceId ?? null, call.agentId, call.sessionId ?? null, call.tool, call.argsDigest, call.ok ? 1 : 0, call.errorCode ?? null, Math.round(call.durationMs), at);
      }
      insertOf(chunk.length).run(values);
    }
  });
  /**
   * Writes rows in one transaction. If the database refuses them, they are kept (bounded,
   * each for at most MAX_TRIES tries) for another try, the refusal is reported, and returned.
   */
  const write = (rows: (Row & { tries?: number })[]): Error | undefined => {
    try {
      writeAll(rows);
      return undefined;
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      const retried = rows.flatMap(({ call, at, tries = 0 }) => (tries + 1 < MAX_TRIES ? [{ call, at, tries: tries + 1 }] : []));
      const all = kept.concat(retried);
      kept = all.slice(-MAX_KEPT);
      reportError(error, { refused: rows.length, kept: kept.length, dropped: rows.length - retried.length + all.length - kept.length });
      return error;
    }
  };
  const flush = (): void => {
    scheduled = false;
    if (!db.open) {
      // Recorded after the store closed (a call finishing while the bot stops): nowhere to
      // write it, and a caller left waiting would hang its turn.
      const error = new Error("the audit database is closed");
      for (const row of queue.splice(0)) row.settle(error);
      return;
    }
    if (db.inTransaction) {
      // Inside someone else's transaction the rows would only be committed with it (or
      // rolled back): telling their callers now would be a promise not kept. Later.
      if (queue.length > 0 || kept.length > 0) {
        scheduled = true;
        schedule(flushReporting);
      }
      return;
    }
    // Rows refused before go in a transaction of their own: one that cannot be written
    // fails no new caller.
    if (kept.length > 0) write(kept.splice(0));
    if (queue.length === 0) return;
    const rows = queue.splice(0);
    // Refused or not, the callers are told now: a result waits for its row, not for the disk to recover.
    const error = write(rows);
    for (const row of rows) row.settle(error);
    if (error) throw error;
  };
  /** A flush of its own turn: a failure was reported and told to the callers, nobody else to throw to. */
  function flushReporting(): void {
    try {
      flush();
    } catch {
      // Reported by flush.
    }
  }
  return {
    /**
     * Queues the row; it is committed with the others of this turn in one transaction.
     * Resolves once it is, rejects with the database's error if that transaction failed
     * (the row is then kept and tried again, apart, with the next flushes).
     */
    record(call: ToolCallRecord): Promise<void> {
      return new Promise((resolve, reject) => {
        queue.push({ call, at: clock.now(), settle: (error) => (error ? reject(error) : resolve()) });
        if (queue.length % FLUSH_AT_ROWS === 0) return flushReporting();
        if (scheduled) return;
        scheduled = true;
        schedule(flushReporting);
      });
    },
    /** Who hears of every write the database refused, and what became of its rows. */
    onFlushError(handler: (error: unknown, failure: FlushFailure) => void): void {
      reportError = handler;
    },
    /** Writes every queued and kept row now (the store's close and every read of the trail do); throws if the queued ones were refused. */
    flush,
    /** Rows not written yet: queued, and kept after a refusal. */
    get pending(): number {
      return queue.length + kept.length;
    },
    byTrace: (traceId: string): ToolCallRow[] => {
      flush();
      return byTrace.all(traceId);
    },
  };
}
