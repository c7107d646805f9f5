/**
 * News one replica must pass to the others: skills changed (a draft, /reload_skills), a
 * library switched. File watchers do not cross hosts, so on PostgreSQL the news travels by
 * LISTEN/NOTIFY on one dedicated connection (reconnected with back-off when it drops); on
 * SQLite there is one process and the news stays in it. A replica hears its own news at
 * once, in process, and ignores its echo.
 */
import type { Logger } from "pino";
import type pg from "pg";
import type { PostgresDriver } from "../store/sql/postgres-driver.js";
import type { SqlDriver } from "../store/sql/sql-driver.js";

export const BUS_CHANNEL = "laoding_events";

export type ReplicaEvent = { topic: "skills-changed" | "library-switched"; agentId: string };

export type ReplicaBus = {
  publish(event: ReplicaEvent): Promise<void>;
  subscribe(listener: (event: ReplicaEvent, from: string) => void): () => void;
  /** Resolves once the bus listens (PostgreSQL) or at once (SQLite). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
};

type Envelope = { from: string; event: ReplicaEvent };

/** The sender of the catch-up news a replica gives itself after its bus reconnected. */
export const RECONNECTED = "(bus reconnected)";

export function createReplicaBus(sql: SqlDriver, replica: string, logger: Logger): ReplicaBus {
  const listeners = new Set<(event: ReplicaEvent, from: string) => void>();
  const deliver = (event: ReplicaEvent, from: string) => {
    for (const listener of listeners) {
      try {
        listener(event, from);
      } catch (error) {
        logger.error({ err: error, topic: event.topic }, "a replica event listener failed");
      }
    }
  };
  let closed = false;
  let client: pg.PoolClient | undefined;
  let retryMs = 500;
  let listenedBefore = false;
  let reconnecting = false;

  async function listen(): Promise<void> {
    const driver = sql as PostgresDriver;
    const connection = await driver.connect();
    // Closed while connecting (a stop during a reconnect): a connection kept would hold the pool's end() for ever.
    if (closed) return connection.release();
    connection.on("notification", (message) => {
      if (message.channel !== BUS_CHANNEL || !message.payload) return;
      let envelope: Envelope;
      try {
        envelope = JSON.parse(message.payload) as Envelope;
      } catch {
        logger.warn({ payload: message.payload.slice(0, 200) }, "unreadable replica event ignored");
        return;
      }
      if (envelope.from === replica) return;
      logger.info(
        { topic: envelope.event.topic, agentId: envelope.event.agentId, from: envelope.from },
        "news from another replica",
      );
      deliver(envelope.event, envelope.from);
    });
    let dropped = false;
    connection.on("error", (error) => {
      // After close() the connection is the pool's again (this listener stays on it): the pool handles its errors.
      // Released once: a second release throws, from an event handler, and would end the process.
      if (closed || dropped) return;
      dropped = true;
      logger.warn({ err: error }, "the replica bus connection dropped; reconnecting");
      connection.release(true);
      if (client === connection) client = undefined;
      reconnect();
    });
    try {
      await connection.query(`LISTEN ${BUS_CHANNEL}`);
    } catch (error) {
      // Refused without dropping the connection: give it back (destroyed), or every retry keeps a pool slot.
      if (!dropped) {
        dropped = true;
        connection.release(true);
      }
      throw error;
    }
    if (closed) return connection.release(true);
    client = connection;
    retryMs = 500;
    if (listenedBefore) {
      // News sent while the connection was down is lost: assume skills changed everywhere.
      logger.info("the replica bus listens again; reloading skills in case news was missed");
      deliver({ topic: "skills-changed", agentId: "*" }, RECONNECTED);
    }
    listenedBefore = true;
  }

  function reconnect(): void {
    // The dropped connection's error and the failed LISTEN can both ask: one reconnect at a time.
    if (closed || reconnecting) return;
    reconnecting = true;
    const timer = setTimeout(() => {
      reconnecting = false;
      if (closed) return;
      listen().catch((error: unknown) => {
        logger.warn({ err: error, retryMs }, "the replica bus cannot listen yet; trying again");
        retryMs = Math.min(retryMs * 2, 30_000);
        reconnect();
      });
    }, retryMs);
    timer.unref();
  }

  const ready = sql.engine === "postgres" ? listen() : Promise.resolve();

  return {
    ready,
    async publish(event) {
      deliver(event, replica);
      if (sql.engine !== "postgres") return;
      const envelope: Envelope = { from: replica, event };
      await sql.run(`SELECT pg_notify('${BUS_CHANNEL}', ?)`, [JSON.stringify(envelope)]);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      const connection = client;
      client = undefined;
      if (connection) {
        await connection.query(`UNLISTEN ${BUS_CHANNEL}`).catch(() => undefined);
        connection.release();
      }
    },
  };
}
