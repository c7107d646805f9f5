/**
 * The audit trail of tool calls. A call's row is committed before its caller gets the
 * result (`record` resolves then): a result someone saw always has its row, whatever
 * crashes next. Rows recorded in the same turn of the event loop share one transaction
 * (group commit), written when the turn's I/O has been handled: a commit costs 30-60 µs
 * on the bench machine's disk whatever it holds, so answers that arrive together pay for one.
 * A read of the trail, `flush()`, the store's close and the process's exit write the
 * queue first, and a full queue is written at once. One flush runs at a time: a flush
 * asked for while one is running starts after it.
 */
import { AsyncResource } from "node:async_hooks";
import type { ToolCallAudit } from "../toolhost/client/toolhost-client.js";
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";
import type { SqliteDriver } from "./sql/sqlite-driver.js";

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

const BY_TRACE = `SELECT id, trace_id AS traceId, agent_id AS agentId, session_id AS sessionId, tool, args_digest AS argsDigest, ok,
       error_code AS errorCode, duration_ms AS durationMs, created_at AS createdAt
     FROM tool_calls WHERE trace_id = ? ORDER BY id`;

/** The INSERT of `count` rows: one text per count (the SQLite driver prepares each text once). */
const insertTexts = new Map<number, string>();
function insertOf(count: number): string {
  let text = insertTexts.get(count);
  if (!text) {
    const values = Array.from({ length: count }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    text = `INSERT INTO tool_calls (trace_id, agent_id, session_id, tool, args_digest, ok, error_code, duration_ms, created_at) VALUES ${values}`;
    insertTexts.set(count, text);
  }
  return text;
}

type Row = { call: ToolCallRecord; at: number };

/** The rows of one INSERT, in their columns' order. */
function valuesOf(rows: Row[]): (string | number | null)[] {
  const values: (string | number | null)[] = [];
  for (const { call, at } of rows) {
    values.push(
      call.traceId ?? null,
      call.agentId,
      call.sessionId ?? null,
      call.tool,
      call.argsDigest,
      call.ok ? 1 : 0,
      call.errorCode ?? null,
      Math.round(call.durationMs),
      at,
    );
  }
  return values;
}

export function createToolCallsStore(sql: SqlDriver, clock: Clock, schedule: FlushScheduler = endOfTurn) {
  /** Rows whose callers wait for their commit. */
  const queue: (Row & { settle: (error?: Error) => void })[] = [];
  /** Rows refused before: their callers were told; each is tried again, apart, with the next flushes. */
  let kept: (Row & { tries: number })[] = [];
  let scheduled = false;
  /** The flush writing now, and the one asked for while it runs (it starts when the first ends). */
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let reportError: (error: unknown, failure: FlushFailure) => void = () => undefined;
  const writeAll = (rows: Row[]): Promise<void> =>
    sql.transaction(async () => {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        const chunk = rows.slice(start, start + ROWS_PER_INSERT);
        await sql.run(insertOf(chunk.length), valuesOf(chunk));
      }
    });
  /** Keeps refused rows (bounded, each for at most MAX_TRIES tries) for another try and reports the refusal. */
  const refuse = (thrown: unknown, rows: (Row & { tries?: number })[]): Error => {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const retried = rows.flatMap(({ call, at, tries = 0 }) =>
      tries + 1 < MAX_TRIES ? [{ call, at, tries: tries + 1 }] : [],
    );
    const all = kept.concat(retried);
    kept = all.slice(-MAX_KEPT);
    reportError(error, {
      refused: rows.length,
      kept: kept.length,
      dropped: rows.length - retried.length + all.length - kept.length,
    });
    return error;
  };
  /**
   * Writes rows in one transaction. If the database refuses them, they are kept for
   * another try, the refusal is reported, and returned.
   */
  const write = async (rows: (Row & { tries?: number })[]): Promise<Error | undefined> => {
    try {
      await writeAll(rows);
      return undefined;
    } catch (thrown) {
      return refuse(thrown, rows);
    }
  };
  const flushNow = async (): Promise<void> => {
    scheduled = false;
    if (sql.closed) {
      // Recorded after the store closed (a call finishing while the bot stops): nowhere to
      // write it, and a caller left waiting would hang its turn.
      const error = new Error("the audit database is closed");
      for (const row of queue.splice(0)) row.settle(error);
      return;
    }
    // Rows refused before go in a transaction of their own: one that cannot be written
    // fails no new caller.
    if (kept.length > 0) await write(kept.splice(0));
    if (queue.length === 0) return;
    const rows = queue.splice(0);
    // Refused or not, the callers are told now: a result waits for its row, not for the disk to recover.
    const error = await write(rows);
    for (const row of rows) row.settle(error);
    if (error) throw error;
  };
  const start = (): Promise<void> => {
    const flushing: Promise<void> = flushNow().finally(() => {
      if (running === flushing) running = undefined;
    });
    running = flushing;
    return flushing;
  };
  const flush = (): Promise<void> => {
    if (sql.inTransaction()) {
      // Inside someone else's transaction the rows would only be committed with it (or
      // rolled back): telling their callers now would be a promise not kept. The
      // scheduled flush runs outside it, once it has ended.
      if ((queue.length > 0 || kept.length > 0) && !scheduled) {
        scheduled = true;
        schedule(scheduledFlush);
      }
      return Promise.resolve();
    }
    if (!running) return start();
    // Never two at once: the queue is written after the running flush, by one more flush
    // shared by everyone who asks meanwhile.
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
  /** A flush of its own turn: a failure was reported and told to the callers, nobody else to throw to. */
  function flushReporting(): void {
    flush().catch(() => {
      // Reported by flush.
    });
  }
  /**
   * The scheduled flush runs in the async context the store was made in, not in the
   * recording caller's: a row recorded inside a transaction must not be written by (and
   * committed or rolled back with) that transaction.
   */
  const scheduledFlush = AsyncResource.bind(flushReporting);
  return {
    /**
     * Queues the row; it is committed with the others of this turn in one transaction.
     * Resolves once it is, rejects with the database's error if that transaction failed
     * (the row is then kept and tried again, apart, with the next flushes).
     */
    record(call: ToolCallRecord): Promise<void> {
      return new Promise((resolve, reject) => {
        queue.push({ call, at: clock.now(), settle: (error) => (error ? reject(error) : resolve()) });
        if (queue.length % FLUSH_AT_ROWS === 0) return scheduledFlush();
        if (scheduled) return;
        scheduled = true;
        schedule(scheduledFlush);
      });
    },
    /** Who hears of every write the database refused, and what became of its rows. */
    onFlushError(handler: (error: unknown, failure: FlushFailure) => void): void {
      reportError = handler;
    },
    /** Writes every queued and kept row now (the store's close and every read of the trail do); rejects if the queued ones were refused. */
    flush,
    /**
     * The process's exit: writes every queued and kept row before this call returns. On
     * SQLite it writes them through the connection itself, in one transaction. PostgreSQL
     * cannot be written synchronously: the rows are left (the caller is exiting; their
     * callers were never told they were committed). Also leaves them when a transaction
     * is open on the SQLite connection (a flush halfway, someone else's work): a write
     * now would only commit or roll back with it, and the exit rolls it back.
     */
    flushSync(): void {
      if (sql.engine !== "sqlite") return;
      const db = (sql as SqliteDriver).database;
      if (!db.open || db.inTransaction) return;
      const writeSync = (rows: (Row & { tries?: number })[]): Error | undefined => {
        try {
          db.transaction(() => {
            for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
              const chunk = rows.slice(start, start + ROWS_PER_INSERT);
              db.prepare(insertOf(chunk.length)).run(valuesOf(chunk));
            }
          })();
          return undefined;
        } catch (thrown) {
          return refuse(thrown, rows);
        }
      };
      // As in a flush: rows refused before go in a transaction of their own.
      if (kept.length > 0) writeSync(kept.splice(0));
      if (queue.length === 0) return;
      const rows = queue.splice(0);
      const error = writeSync(rows);
      for (const row of rows) row.settle(error);
    },
    /** Rows not written yet: queued, and kept after a refusal. */
    get pending(): number {
      return queue.length + kept.length;
    },
    byTrace: async (traceId: string): Promise<ToolCallRow[]> => {
      await flush();
      return sql.all<ToolCallRow>(BY_TRACE, [traceId]);
    },
  };
}
