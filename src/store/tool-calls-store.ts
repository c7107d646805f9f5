/**
 * The audit trail of tool calls, written ahead (issue 29). A call's intent row (agent,
 * session, tool, argument digest, redacted arguments, trace id, start time, the process
 * that sends it) is committed before the call can have an effect, and `begin(...).committed`
 * resolves then; the caller gets the result only after that. The outcome (ok or error
 * code, duration, bytes) is written by a later group commit: `finish` only queues it.
 *
 * Rows and outcomes queued in the same turn of the event loop share one transaction
 * (group commit), written when the turn's I/O has been handled: a commit costs 30-60 µs on
 * the bench machine's disk whatever it holds. So at concurrency 1 one commit carries the
 * last call's outcome and the next call's intent, and it runs while that call travels to
 * the child and is served there. A read of the trail, `flush()`, the store's close and the
 * process's exit write the queue first, and a full queue is written at once. One flush
 * runs at a time: a flush asked for while one is running starts after it.
 *
 * An intent row without an outcome is a call in flight, or one whose process stopped (a
 * crash, a kill, a power cut) before its outcome was written: `sweepStopped` (the bot's
 * start-up) marks those whose process is gone as OUTCOME_UNKNOWN, and every read of the
 * trail says which is which (`outcome`).
 */
import { AsyncResource } from "node:async_hooks";
import { hostname } from "node:os";
import type { AuditEntry, ToolCallAudit, ToolCallIntent, ToolCallOutcome } from "../toolhost/client/toolhost-client.js";
import type { Clock } from "./clock.js";
import type { SqlDriver, SqlValue } from "./sql/sql-driver.js";
import type { SqliteDriver } from "./sql/sqlite-driver.js";
import type Database from "better-sqlite3";

/** A call known whole (its intent and its outcome): what `record` stores as one row. */
export type ToolCallRecord = ToolCallAudit;

/** The error code a start-up sweep gives a call whose process stopped before its outcome was written. */
export const OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";

/**
 * What became of a call, as a reader of the trail should take it: `ok` and `failed` from
 * its outcome; `unknown` when its process stopped first (swept, or its process is gone);
 * `pending` while the process that sent it still runs (in flight, or the outcome not
 * written yet), or when it ran on another host, whose processes this one cannot see.
 */
export type ToolCallState = "ok" | "failed" | "unknown" | "pending";

export type ToolCallRow = {
  id: number;
  traceId: string | null;
  agentId: string;
  sessionId: number | null;
  tool: string;
  argsDigest: string;
  /** The arguments, redacted and shortened; null on rows written before issue 29. */
  args: string | null;
  /** `host:pid` of the process that sent the call; null on rows written before issue 29. */
  writer: string | null;
  /** 1 or 0 once the outcome is written; null before (and after a sweep). */
  ok: number | null;
  errorCode: string | null;
  durationMs: number | null;
  /** The bytes of the call's output, once the outcome is written. */
  bytes: number | null;
  /** When the intent was recorded: the call's start (rows from before issue 29: its end). */
  createdAt: number;
  outcome: ToolCallState;
};

export type ToolCallsStore = ReturnType<typeof createToolCallsStore>;

/** Schedules the flush of the queue (tests pass their own). */
export type FlushScheduler = (flush: () => void) => void;

export type ToolCallsStoreOptions = {
  /** Who sends the calls: `host:pid` (tests name another). */
  writer?: string;
  /** Whether a process of this host still runs (tests pass their own). */
  processAlive?: (pid: number) => boolean;
};

/** A queue this long is written at once, without waiting for the turn to end. */
const FLUSH_AT_ROWS = 500;
/** Rows per INSERT or UPDATE statement: one statement for many rows is a fraction of the binding and stepping of one each. */
const ROWS_PER_STATEMENT = 64;
/** Rows kept after the database refused them (their callers were told); older ones are dropped past this. */
const MAX_KEPT = 10_000;
/** A kept row is given up after this many refused transactions (a row that cannot be written must not be tried forever). */
const MAX_TRIES = 3;

/**
 * What a failed write did with its rows: refused in this transaction, kept for another
 * try, given up. `of: "outcomes"` when the refused rows were outcomes (nobody waits for
 * those); intents otherwise.
 */
export type FlushFailure = { refused: number; kept: number; dropped: number; of?: "outcomes" };

/** After the I/O callbacks of this turn of the event loop: every answer read in it has queued its row by then. */
const endOfTurn: FlushScheduler = (flush) => void setImmediate(flush);

const COLUMNS = `id, trace_id AS traceId, agent_id AS agentId, session_id AS sessionId, tool, args_digest AS argsDigest,
       args, writer, ok, error_code AS errorCode, duration_ms AS durationMs, bytes, created_at AS createdAt`;
const BY_TRACE = `SELECT ${COLUMNS} FROM tool_calls WHERE trace_id = ? ORDER BY id`;
const RECENT = `SELECT ${COLUMNS} FROM tool_calls WHERE agent_id = ? ORDER BY id DESC LIMIT ?`;
/** Writers with calls that have no outcome (the partial index tool_calls_open). */
const OPEN_WRITERS = `SELECT DISTINCT writer FROM tool_calls WHERE ok IS NULL AND error_code IS NULL AND writer IS NOT NULL`;
const MARK_UNKNOWN = `UPDATE tool_calls SET error_code = '${OUTCOME_UNKNOWN}' WHERE writer = ? AND ok IS NULL AND error_code IS NULL AND created_at < ?`;

/** A statement's text per row count (the SQLite driver prepares each text once). */
function memo(make: (count: number) => string): (count: number) => string {
  const texts = new Map<number, string>();
  return (count) => {
    let text = texts.get(count);
    if (!text) texts.set(count, (text = make(count)));
    return text;
  };
}

const INSERT_COLUMNS =
  "trace_id, agent_id, session_id, tool, args_digest, args, writer, ok, error_code, duration_ms, bytes, created_at";
const insertOf = memo((count) => {
  const values = Array.from({ length: count }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
  return `INSERT INTO tool_calls (${INSERT_COLUMNS}) VALUES ${values}`;
});
/** PostgreSQL's INSERT gives back the ids it made (SQLite's are counted from the last one: see sqliteWriter). */
const insertReturningOf = memo((count) => `${insertOf(count)} RETURNING id`);
/** One outcome: SQLite's statement (a prepared UPDATE by id costs a fraction of UPDATE ... FROM VALUES there). */
const UPDATE_ONE = "UPDATE tool_calls SET ok = ?, error_code = ?, duration_ms = ?, bytes = ? WHERE id = ?";
/** Many outcomes in one PostgreSQL statement (one round trip); the casts type its VALUES. */
const updateOf = memo((count) => {
  const values = Array.from(
    { length: count },
    () => "(CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT))",
  ).join(", ");
  return `UPDATE tool_calls SET ok = v.column2, error_code = v.column3, duration_ms = v.column4, bytes = v.column5
    FROM (VALUES ${values}) AS v WHERE tool_calls.id = v.column1`;
});

/** One call's row, from its intent until its outcome is written. */
type Row = {
  intent: ToolCallIntent;
  at: number;
  outcome?: ToolCallOutcome;
  /** Set once the intent row is committed. */
  id?: number;
  /** Told when the intent row is committed or refused; undefined once told. */
  settle?: (error?: Error) => void;
  /** Refused transactions so far: of the intent, then of the outcome. */
  tries: number;
};

function outcomeValues(outcome: ToolCallOutcome): [number, string | null, number, number | null] {
  return [
    outcome.ok ? 1 : 0,
    outcome.errorCode ?? null,
    Math.round(outcome.durationMs),
    outcome.bytes === undefined ? null : Math.round(outcome.bytes),
  ];
}

/** The INSERT values of some rows, in their columns' order. */
function insertValues(rows: Row[], writer: string): SqlValue[] {
  const values: SqlValue[] = [];
  for (const { intent, at, outcome } of rows) {
    values.push(
      intent.traceId ?? null,
      intent.agentId,
      intent.sessionId ?? null,
      intent.tool,
      intent.argsDigest,
      intent.args ?? null,
      writer,
      ...(outcome ? outcomeValues(outcome) : [null, null, null, null]),
      at,
    );
  }
  return values;
}

function chunks<T>(items: T[]): T[][] {
  const all: T[][] = [];
  for (let start = 0; start < items.length; start += ROWS_PER_STATEMENT)
    all.push(items.slice(start, start + ROWS_PER_STATEMENT));
  return all;
}

/**
 * Writes intent rows and outcomes on the SQLite connection itself, synchronously: inside
 * the driver's transaction for a flush, in one of its own at the process's exit. The
 * statements are prepared once. The ids of an INSERT's rows are counted back from the
 * last one: rows without an id of their own get the table's largest id plus one, one
 * after the other, and the transaction holds the only write lock (RETURNING would cost
 * a third of a commit more here).
 */
function sqliteWriter(sql: SqliteDriver, writer: string) {
  const prepared = new Map<string, Database.Statement>();
  const statement = (text: string): Database.Statement => {
    let found = prepared.get(text);
    if (!found) prepared.set(text, (found = sql.database.prepare(text)));
    return found;
  };
  return (rows: Row[], updates: Row[]): number[] => {
    const ids: number[] = [];
    for (const chunk of chunks(rows)) {
      const last = Number(statement(insertOf(chunk.length)).run(insertValues(chunk, writer)).lastInsertRowid);
      for (let index = chunk.length - 1; index >= 0; index -= 1) ids.push(last - index);
    }
    const update = updates.length > 0 ? statement(UPDATE_ONE) : undefined;
    for (const { id, outcome } of updates) update?.run(...outcomeValues(outcome as ToolCallOutcome), id as number);
    return ids;
  };
}

/** The same through the PostgreSQL driver: many rows per statement, the ids as RETURNING gives them. */
async function writePostgres(sql: SqlDriver, writer: string, rows: Row[], updates: Row[]): Promise<number[]> {
  const ids: number[] = [];
  for (const chunk of chunks(rows)) {
    const returned = await sql.all<{ id: number }>(insertReturningOf(chunk.length), insertValues(chunk, writer));
    // Ids grow in the order the VALUES rows were inserted; RETURNING's own order is not promised.
    ids.push(...returned.map((row) => Number(row.id)).sort((a, b) => a - b));
  }
  for (const chunk of chunks(updates)) {
    const values: SqlValue[] = [];
    for (const { id, outcome } of chunk) values.push(id as number, ...outcomeValues(outcome as ToolCallOutcome));
    await sql.run(updateOf(chunk.length), values);
  }
  return ids;
}

/** `host:pid`, as replica names are: what a sweep on this host can check. */
export function thisWriter(): string {
  return `${hostname()}:${process.pid}`;
}

function processAliveHere(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The host and pid of a `host:pid` writer (the host may hold colons). */
function parseWriter(writer: string): { host: string; pid: number } | undefined {
  const match = /^(.*):(\d+)$/.exec(writer);
  return match ? { host: match[1] as string, pid: Number(match[2]) } : undefined;
}

/** A call's state in words, for `laoding gaps show` and any view of the trail. */
export function describeToolCall(row: Pick<ToolCallRow, "outcome" | "errorCode" | "durationMs" | "bytes">): string {
  switch (row.outcome) {
    case "ok":
      return `ok ${row.durationMs ?? 0} ms${row.bytes === null ? "" : `, ${row.bytes} bytes`}`;
    case "failed":
      return `${row.errorCode ?? "failed"} ${row.durationMs ?? 0} ms`;
    case "unknown":
      return "outcome unknown (the bot stopped)";
    case "pending":
      return "no outcome yet (in progress)";
  }
}

export function createToolCallsStore(
  sql: SqlDriver,
  clock: Clock,
  schedule: FlushScheduler = endOfTurn,
  options: ToolCallsStoreOptions = {},
) {
  const writer = options.writer ?? thisWriter();
  const processAlive = options.processAlive ?? processAliveHere;
  const openedAt = clock.now();
  /** Intent rows whose callers wait for their commit. */
  const queue: Row[] = [];
  /** Intent rows refused before: their callers were told; each is tried again, apart, with the next flushes. */
  let kept: Row[] = [];
  /** Committed rows whose outcome is to be written. */
  let outcomes: Row[] = [];
  let scheduled = false;
  /** The flush writing now, and the one asked for while it runs (it starts when the first ends). */
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  let reportError: (error: unknown, failure: FlushFailure) => void = () => undefined;

  const queueOutcome = (row: Row): void => {
    row.tries = 0;
    outcomes.push(row);
    if (outcomes.length % FLUSH_AT_ROWS === 0) return scheduledFlush();
    later();
  };
  /** After a commit: the rows' ids, and an outcome that came while the INSERT was on its way goes to the next flush. */
  const committed = (rows: Row[], included: boolean[], ids: number[]): void => {
    rows.forEach((row, index) => {
      row.id = ids[index];
      if (row.outcome && !included[index]) queueOutcome(row);
    });
  };
  const asError = (thrown: unknown): Error => (thrown instanceof Error ? thrown : new Error(String(thrown)));
  /** Keeps refused rows (bounded, each for at most MAX_TRIES tries) for another try and reports the refusal. */
  const refuse = (error: Error, rows: Row[], of?: "outcomes"): void => {
    const retried = rows.filter((row) => (row.tries += 1) < MAX_TRIES);
    let dropped = rows.length - retried.length;
    if (of) {
      const all = outcomes.concat(retried);
      outcomes = all.slice(-MAX_KEPT);
      dropped += all.length - outcomes.length;
      reportError(error, { refused: rows.length, kept: outcomes.length, dropped, of });
      return;
    }
    const all = kept.concat(retried);
    kept = all.slice(-MAX_KEPT);
    dropped += all.length - kept.length;
    reportError(error, { refused: rows.length, kept: kept.length, dropped });
  };

  const sqlite = sql.engine === "sqlite" ? sqliteWriter(sql as SqliteDriver, writer) : undefined;
  /** Runs one transaction through the driver (taking turns with everyone else's); resolves with the new rows' ids. */
  const runAsync = (rows: Row[], updates: Row[]): Promise<number[]> =>
    sql.transaction(async () => (sqlite ? sqlite(rows, updates) : writePostgres(sql, writer, rows, updates)));
  /** The same on the SQLite connection itself, done before it returns (the process's exit). */
  const runSync = (rows: Row[], updates: Row[]): number[] =>
    (sql as SqliteDriver).database.transaction(() => (sqlite as NonNullable<typeof sqlite>)(rows, updates))();

  /**
   * One flush's writes: kept rows apart (one that cannot be written fails no new caller),
   * then the queued intents with the waiting outcomes in one transaction. If that is
   * refused and held outcomes, the intents are tried once more alone, so an outcome the
   * database refuses never withholds a new caller's result. Returns the new intents'
   * refusal, if any (their callers have been told).
   */
  function writeAll(run: (rows: Row[], updates: Row[]) => number[]): Error | undefined;
  function writeAll(run: (rows: Row[], updates: Row[]) => Promise<number[]>): Promise<Error | undefined>;
  function writeAll(
    run: (rows: Row[], updates: Row[]) => number[] | Promise<number[]>,
  ): Error | undefined | Promise<Error | undefined> {
    const attempt = (
      rows: Row[],
      updates: Row[],
      then: (error?: Error) => Error | undefined | Promise<Error | undefined>,
    ) => {
      const included = rows.map((row) => row.outcome !== undefined);
      let result: number[] | Promise<number[]>;
      try {
        result = run(rows, updates);
      } catch (thrown) {
        return then(asError(thrown));
      }
      const done = (ids: number[]) => (committed(rows, included, ids), then());
      return result instanceof Promise ? result.then(done, (thrown: unknown) => then(asError(thrown))) : done(result);
    };
    const tell = (rows: Row[], error?: Error) => {
      for (const row of rows) {
        const settle = row.settle;
        row.settle = undefined;
        settle?.(error);
      }
    };
    const fresh = (): Error | undefined | Promise<Error | undefined> => {
      if (queue.length === 0 && outcomes.length === 0) return undefined;
      const rows = queue.splice(0);
      const updates = outcomes.splice(0);
      return attempt(rows, updates, (error) => {
        if (!error) return (tell(rows), undefined);
        if (rows.length === 0) return (refuse(error, updates, "outcomes"), undefined);
        if (updates.length === 0) return (refuse(error, rows), tell(rows, error), error);
        // Refused with outcomes in it: the outcomes wait; the intents go alone.
        refuse(error, updates, "outcomes");
        return attempt(rows, [], (alone) => {
          if (alone) refuse(alone, rows);
          tell(rows, alone);
          return alone;
        });
      });
    };
    if (kept.length === 0) return fresh();
    const retried = kept.splice(0);
    const after = attempt(retried, [], (error) => {
      if (error) refuse(error, retried);
      return undefined;
    });
    return after instanceof Promise ? after.then(fresh) : fresh();
  }

  const flushNow = async (): Promise<void> => {
    scheduled = false;
    if (sql.closed) {
      // Recorded after the store closed (a call finishing while the bot stops): nowhere to
      // write it, and a caller left waiting would hang its turn.
      const error = new Error("the audit database is closed");
      for (const row of queue.splice(0)) row.settle?.(error);
      return;
    }
    const error = await writeAll(runAsync);
    if (error) throw error;
  };
  const start = (): Promise<void> => {
    const flushing: Promise<void> = flushNow().finally(() => {
      if (running === flushing) running = undefined;
    });
    running = flushing;
    return flushing;
  };
  const waiting = () => queue.length > 0 || kept.length > 0 || outcomes.length > 0;
  const flush = (): Promise<void> => {
    if (sql.inTransaction()) {
      // Inside someone else's transaction the rows would only be committed with it (or
      // rolled back): telling their callers now would be a promise not kept. The
      // scheduled flush runs outside it, once it has ended.
      if (waiting()) later();
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
  function later(): void {
    if (scheduled) return;
    scheduled = true;
    schedule(scheduledFlush);
  }

  const begin = (intent: ToolCallIntent, outcome?: ToolCallOutcome): AuditEntry => {
    const row: Row = { intent, at: clock.now(), tries: 0 };
    if (outcome) row.outcome = outcome;
    const committedPromise = new Promise<void>((resolve, reject) => {
      row.settle = (error) => (error ? reject(error) : resolve());
    });
    // Whoever began the call awaits this, but maybe only after its answer: a refusal
    // meanwhile is not an unhandled rejection.
    committedPromise.catch(() => undefined);
    queue.push(row);
    if (queue.length % FLUSH_AT_ROWS === 0) scheduledFlush();
    else later();
    return {
      committed: committedPromise,
      finish(result: ToolCallOutcome): void {
        if (row.outcome) return;
        row.outcome = result;
        // Not committed yet: its INSERT (or the retry of a refused one) carries the outcome.
        if (row.id !== undefined) queueOutcome(row);
      },
    };
  };

  /** The state of rows without an outcome, from their writers: gone (unknown), running here, or elsewhere. */
  const withOutcome = (rows: Omit<ToolCallRow, "outcome">[]): ToolCallRow[] => {
    const host = hostname();
    const alive = new Map<number, boolean>();
    return rows.map((row) => {
      let outcome: ToolCallState;
      if (row.ok !== null) outcome = row.ok ? "ok" : "failed";
      else if (row.errorCode === OUTCOME_UNKNOWN) outcome = "unknown";
      else if (row.errorCode !== null) outcome = "failed";
      else {
        const from = row.writer === null ? undefined : parseWriter(row.writer);
        // This process's own rows from before it opened the store are an earlier process's with the same pid.
        if (row.writer === writer) outcome = row.createdAt >= openedAt ? "pending" : "unknown";
        else if (!from || from.host !== host) outcome = "pending";
        else {
          let running = alive.get(from.pid);
          if (running === undefined) alive.set(from.pid, (running = processAlive(from.pid)));
          outcome = running ? "pending" : "unknown";
        }
      }
      return { ...row, outcome };
    });
  };

  return {
    /**
     * Queues a call's intent row; it is committed with the others of this turn in one
     * transaction. `committed` resolves once it is, rejects with the database's error if
     * that transaction failed (the row is then kept and tried again, apart, with the next
     * flushes, its outcome with it). `finish` queues the outcome for a later commit.
     */
    begin,
    /**
     * A call known whole (intent and outcome) as one row; resolves once it is committed,
     * rejects as `begin`'s `committed` does.
     */
    record(call: ToolCallRecord): Promise<void> {
      const { ok, errorCode, durationMs, bytes, ...intent } = call;
      const outcome: ToolCallOutcome = { ok, durationMs };
      if (errorCode !== undefined) outcome.errorCode = errorCode;
      if (bytes !== undefined) outcome.bytes = bytes;
      return begin(intent, outcome).committed;
    },
    /** Who hears of every write the database refused, and what became of its rows. */
    onFlushError(handler: (error: unknown, failure: FlushFailure) => void): void {
      reportError = handler;
    },
    /** Writes every queued and kept row and outcome now (the store's close and every read of the trail do); rejects if the queued intents were refused. */
    flush,
    /**
     * The process's exit: writes every queued and kept row and outcome before this call
     * returns. On SQLite it writes them through the connection itself. PostgreSQL cannot
     * be written synchronously: the rows are left (the caller is exiting; their callers
     * were never told they were committed, and a row without an outcome is what a sweep
     * marks). Also leaves them when a transaction is open on the SQLite connection (a
     * flush halfway, someone else's work): a write now would only commit or roll back
     * with it, and the exit rolls it back.
     */
    flushSync(): void {
      if (sql.engine !== "sqlite") return;
      const db = (sql as SqliteDriver).database;
      if (!db.open || db.inTransaction) return;
      writeAll(runSync);
    },
    /**
     * Marks the calls whose process stopped before their outcome was written (a crash, a
     * kill): OUTCOME_UNKNOWN, for every writer of this host whose process is gone, and
     * this process's own rows from before it opened the store (an earlier process with the
     * same pid). Writers of other hosts are left to their own host's sweep. Returns how
     * many calls it marked.
     */
    async sweepStopped(): Promise<number> {
      const host = hostname();
      let marked = 0;
      for (const { writer: other } of await sql.all<{ writer: string }>(OPEN_WRITERS)) {
        const from = parseWriter(other);
        if (!from || from.host !== host) continue;
        if (other !== writer && processAlive(from.pid)) continue;
        // Another writer's rows all count; this process's own only those from before it opened the store.
        const before = other === writer ? openedAt : Number.MAX_SAFE_INTEGER;
        marked += (await sql.run(MARK_UNKNOWN, [other, before])).changes;
      }
      return marked;
    },
    /** Intent rows and outcomes not written yet: queued, and kept after a refusal. */
    get pending(): number {
      return queue.length + kept.length + outcomes.length;
    },
    byTrace: async (traceId: string): Promise<ToolCallRow[]> => {
      await flush();
      return withOutcome(await sql.all<Omit<ToolCallRow, "outcome">>(BY_TRACE, [traceId]));
    },
    /** An agent's latest calls, newest first. */
    recent: async (agentId: string, limit: number): Promise<ToolCallRow[]> => {
      await flush();
      return withOutcome(await sql.all<Omit<ToolCallRow, "outcome">>(RECENT, [agentId, limit]));
    },
  };
}
