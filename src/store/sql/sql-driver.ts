/**
 * The one seam between the repositories and a database engine. Repositories write
 * portable SQL (`?` or `@name` placeholders, `ON CONFLICT`, `RETURNING`, integer 0/1 for
 * flags, camelCase aliases) and every call is async, so the same repository code runs on
 * the embedded SQLite file and on PostgreSQL. A transaction follows its async context:
 * every query made inside `transaction(work)` — by any repository — runs in it.
 */
export type SqlValue = string | number | bigint | null | Buffer;
/** Positional values for `?`, or named values for `@name`. */
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

export type Engine = "sqlite" | "postgres";

export type TransactionOptions = { lock?: string };

export type SqlDriver = {
  readonly engine: Engine;
  /** Where the data lives, safe to print: a file path, or host:port/database (never the password). */
  readonly label: string;
  all<Row>(sql: string, params?: SqlParams): Promise<Row[]>;
  get<Row>(sql: string, params?: SqlParams): Promise<Row | undefined>;
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  run(sql: string, params?: SqlParams): Promise<{ changes: number }>;
  /** Statements without parameters, several separated by `;` (schema changes). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it
   * throws. Queries from `work`'s async context join it; a transaction started inside
   * another one joins the outer one. Other callers wait for it (SQLite) or run beside it
   * on other connections (PostgreSQL).
   *
   * `lock` names what the work reads and then changes (`lessons:<agent>`): on PostgreSQL a
   * transaction-scoped advisory lock makes such transactions of every replica take turns,
   * since READ COMMITTED alone lets two of them read the same state and both write. SQLite
   * has one writer, so they take turns already.
   */
  transaction<T>(work: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True inside a transaction's async context. */
  inTransaction(): boolean;
  readonly closed: boolean;
  close(): Promise<void>;
};

export class StoreError extends Error {
  override readonly name = "StoreError";
}

/** An error of the store, or one caused by it (the database, not the caller, failed): StoreError, or better-sqlite3's own. */
export function isStoreFailure(error: unknown): boolean {
  for (
    let current: unknown = error, depth = 0;
    current instanceof Error && depth < 8;
    current = current.cause, depth += 1
  ) {
    if (current.name === "StoreError" || current.name === "SqliteError") return true;
  }
  return false;
}
