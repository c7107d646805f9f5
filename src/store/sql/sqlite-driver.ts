/**
 * The embedded engine: better-sqlite3 on one file (WAL). Statements run synchronously
 * inside the async calls, so a query costs what it cost before the store became async.
 * SQLite has one connection: while a transaction is open, a query from outside its async
 * context waits for the commit instead of joining a transaction that could roll it back.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreError, type SqlDriver, type SqlParams, type TransactionOptions } from "./sql-driver.js";

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export type SqliteDriver = SqlDriver & {
  readonly engine: "sqlite";
  /** The connection itself, for what only SQLite has (online backup, pragmas) and for writes that must not wait (the exit flush). */
  readonly database: Database.Database;
};

export type SqliteDriverOptions = { file: string; busyTimeoutMs?: number; readonly?: boolean };

type Transaction = { done: Promise<void> };

export function openSqliteDriver(options: SqliteDriverOptions): SqliteDriver {
  if (options.file !== ":memory:") mkdirSync(dirname(options.file), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(options.file, { readonly: options.readonly ?? false });
  } catch (error) {
    throw new StoreError(`cannot open database ${options.file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      // NORMAL is durable across process crashes in WAL mode; only power loss can drop the last commits.
      db.pragma("synchronous = NORMAL");
    }
    db.pragma("foreign_keys = ON");
  } catch (error) {
    db.close();
    throw new StoreError(`cannot open database ${options.file}: ${(error as Error).message}`, { cause: error });
  }

  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const context = new AsyncLocalStorage<Transaction>();
  let active: Transaction | undefined;

  /**
   * Each method checks for another context's transaction and runs its statement with no
   * await in between (the `while` below), so a transaction begun meanwhile can neither
   * absorb the statement nor be begun twice.
   */
  const bind = (params: SqlParams | undefined): unknown[] =>
    params === undefined ? [] : Array.isArray(params) ? (params as unknown[]) : [params];

  return {
    engine: "sqlite",
    label: options.file,
    database: db,
    async all<Row>(sql: string, params?: SqlParams) {
      while (active && context.getStore() !== active) await active.done;
      return prepare(sql).all(...bind(params)) as Row[];
    },
    async get<Row>(sql: string, params?: SqlParams) {
      while (active && context.getStore() !== active) await active.done;
      return prepare(sql).get(...bind(params)) as Row | undefined;
    },
    async run(sql: string, params?: SqlParams) {
      while (active && context.getStore() !== active) await active.done;
      return { changes: prepare(sql).run(...bind(params)).changes };
    },
    async exec(sql: string) {
      while (active && context.getStore() !== active) await active.done;
      db.exec(sql);
    },
    // The lock option needs nothing here: SQLite's transactions take turns (one writer).
    async transaction<T>(work: () => Promise<T>, _options?: TransactionOptions): Promise<T> {
      if (active && context.getStore() === active) return work();
      // Checked and taken with no await in between: two callers woken by one commit cannot both begin.
      while (active) await active.done;
      let finish!: () => void;
      const transaction: Transaction = { done: new Promise<void>((resolve) => (finish = resolve)) };
      active = transaction;
      try {
        // IMMEDIATE takes the write lock now: another process's writer cannot make this one fail halfway.
        db.exec("BEGIN IMMEDIATE");
        let result: T;
        try {
          result = await context.run(transaction, work);
        } catch (error) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw error;
        }
        try {
          db.exec("COMMIT");
        } catch (error) {
          // A refused COMMIT (a deferred constraint, a full disk) leaves the transaction open:
          // end it, or every later statement would join it and be lost with it.
          if (db.inTransaction) db.exec("ROLLBACK");
          throw error;
        }
        return result;
      } finally {
        active = undefined;
        finish();
      }
    },
    inTransaction: () => active !== undefined && context.getStore() === active,
    get closed() {
      return !db.open;
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
