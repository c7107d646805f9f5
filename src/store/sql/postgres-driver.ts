/**
 * PostgreSQL through a `pg` pool. The connection string is passed through as given, TLS
 * options (`sslmode`, `sslrootcert`, …) included. Results look like SQLite's: 64-bit
 * integers, sums and averages are numbers (ids and millisecond times fit in 2^53), and
 * booleans are 1/0, so repositories see one shape whatever the engine.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { describeDatabaseUrl } from "./database-url.js";
import { toPostgresQuery, type PostgresQuery } from "./postgres-dialect.js";
import { StoreError, type SqlDriver, type SqlParams, type SqlValue, type TransactionOptions } from "./sql-driver.js";

/** A transaction-scoped advisory lock on a name (released by COMMIT or ROLLBACK). */
const LOCK = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";

export type PostgresDriver = SqlDriver & {
  readonly engine: "postgres";
  readonly pool: pg.Pool;
  /** A connection of its own (LISTEN, session advisory locks); the caller releases it. */
  connect(): Promise<pg.PoolClient>;
};

export type PostgresDriverOptions = {
  url: string;
  maxConnections?: number;
  applicationName?: string;
  onIdleError?: (error: Error) => void;
  queryTimeoutMs?: number;
};

/** How long one statement may take on the client's side; a copy or a migration of a large table passes its own. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    if (oid === BOOL) return (value: string) => (value === "t" ? 1 : 0);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** Opens the pool and makes one round trip, so a wrong address or password stops start-up here with the server's words. */
export async function openPostgresDriver(options: PostgresDriverOptions): Promise<PostgresDriver> {
  const label = describeDatabaseUrl(options.url);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    types,
    application_name: options.applicationName ?? "laoding",
    connectionTimeoutMillis: 10_000,
    // A silent network partition must fail queries (and lease renewals) instead of hanging them.
    keepAlive: true,
    query_timeout: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
  });
  // An idle connection the server drops must not end the process; the next query opens a new one.
  pool.on("error", (error) => options.onIdleError?.(error));
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StoreError(
      `cannot reach PostgreSQL at ${label}: ${serverWords(error)}. Check DATABASE_URL (host, port, user, password, database) and that the server is running`,
      { cause: error },
    );
  }

  const queries = new Map<string, PostgresQuery & { name: string }>();
  /** A transaction's connection while it is open: work scheduled inside it that runs after the commit must not reuse the returned connection. */
  type Transaction = { client: pg.PoolClient; open: boolean };
  const context = new AsyncLocalStorage<Transaction>();
  const openClient = (): pg.PoolClient | undefined => {
    const transaction = context.getStore();
    return transaction?.open ? transaction.client : undefined;
  };
  let closed = false;

  async function query<Row>(sql: string, params?: SqlParams): Promise<pg.QueryResult<Row & pg.QueryResultRow>> {
    let prepared = queries.get(sql);
    if (!prepared) {
      // Named: each connection parses and plans a statement once, instead of at every call.
      prepared = { ...toPostgresQuery(sql), name: `laoding_${queries.size + 1}` };
      queries.set(sql, prepared);
    }
    const values = bindValues(prepared, params, sql);
    const client = openClient();
    try {
      const statement = { name: prepared.name, text: prepared.text, values };
      return client
        ? await client.query<Row & pg.QueryResultRow>(statement)
        : await pool.query<Row & pg.QueryResultRow>(statement);
    } catch (error) {
      throw new StoreError(
        `PostgreSQL at ${label} refused a statement: ${serverWords(error)} (statement: ${sql.replace(/\s+/g, " ").trim().slice(0, 160)})`,
        { cause: error },
      );
    }
  }

  return {
    engine: "postgres",
    label,
    pool,
    connect: () => pool.connect(),
    async all<Row>(sql: string, params?: SqlParams) {
      return (await query<Row>(sql, params)).rows;
    },
    async get<Row>(sql: string, params?: SqlParams) {
      return (await query<Row>(sql, params)).rows[0];
    },
    async run(sql: string, params?: SqlParams) {
      return { changes: (await query(sql, params)).rowCount ?? 0 };
    },
    async exec(sql: string) {
      const client = openClient();
      await (client ? client.query(sql) : pool.query(sql));
    },
    async transaction<T>(work: () => Promise<T>, options?: TransactionOptions): Promise<T> {
      const lockOf = async (client: pg.PoolClient) => {
        if (options?.lock === undefined) return;
        try {
          await client.query(LOCK, [options.lock]);
        } catch (error) {
          throw new StoreError(`PostgreSQL at ${label} refused the lock on ${options.lock}: ${serverWords(error)}`, {
            cause: error,
          });
        }
      };
      const outer = openClient();
      if (outer) {
        // Joining an open transaction: its lock (if any) is held already; this one is taken too.
        await lockOf(outer);
        return work();
      }
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new StoreError(`cannot reach PostgreSQL at ${label}: ${serverWords(error)}`, { cause: error });
      }
      const transaction: Transaction = { client, open: true };
      let broken = false;
      // A connection the server drops while it is checked out says so on the client too, not only to
      // the statement that was running: unheard, that 'error' would end the process.
      const dropped = () => (broken = true);
      client.on("error", dropped);
      try {
        try {
          await client.query("BEGIN");
        } catch (error) {
          broken = true;
          throw new StoreError(`PostgreSQL at ${label} refused BEGIN: ${serverWords(error)}`, { cause: error });
        }
        let result: T;
        try {
          await lockOf(client);
          result = await context.run(transaction, work);
        } catch (error) {
          await client.query("ROLLBACK").catch(() => (broken = true));
          throw error;
        }
        try {
          await client.query("COMMIT");
        } catch (error) {
          // A refused COMMIT (a deferred constraint, a serialization failure) ends the transaction;
          // the ROLLBACK only matters when the connection failed halfway.
          await client.query("ROLLBACK").catch(() => (broken = true));
          throw new StoreError(`PostgreSQL at ${label} refused the COMMIT: ${serverWords(error)}`, { cause: error });
        }
        return result;
      } finally {
        transaction.open = false;
        client.off("error", dropped);
        client.release(broken);
      }
    },
    inTransaction: () => openClient() !== undefined,
    get closed() {
      return closed;
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

function bindValues(query: PostgresQuery, params: SqlParams | undefined, sql: string): SqlValue[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params as SqlValue[];
  const named = params as Readonly<Record<string, SqlValue>>;
  return (query.names ?? []).map((name) => {
    if (!(name in named)) throw new StoreError(`no value for @${name} in: ${sql.slice(0, 120)}`);
    return named[name] as SqlValue;
  });
}

/** What the server (or the network) said, without the connection string. */
export function serverWords(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return serverWords(error.errors[0]);
  const err = error as { message?: string; code?: string };
  const message = err.message && err.message.length > 0 ? err.message : String(error);
  return err.code ? `${message} (${err.code})` : message;
}
