/**
 * This process as one replica of the bot on its database: its name, its leases, the bus
 * to the other replicas, and what /v1/health says about it. What a previous run of this
 * replica held (its leases, its claims on reply parts) is freed at start instead of
 * waiting for it to expire: on PostgreSQL under a fixed REPLICA_NAME; on SQLite, where
 * every process is on this host, whatever a process that is no longer running held (a
 * `laoding chat` beside a running bot leaves that bot's leases alone). A replica whose
 * configuration differs from a live one's names the differing variables in a warning.
 */
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Store } from "../store/store.js";
import { differingVariables, type Fingerprint } from "./config-fingerprint.js";
import { createLeaseKeeper, type LeaseKeeper } from "./lease-keeper.js";
import { createReplicaBus, type ReplicaBus } from "./replica-bus.js";

export type ReplicaHealth = {
  name: string;
  engine: string;
  database: string;
  leases: string[];
  databaseRoundTripMs: number | null;
  databaseError?: string;
  replicas: string[];
};

export type Replica = {
  readonly name: string;
  readonly keeper: LeaseKeeper;
  readonly bus: ReplicaBus;
  health(): Promise<ReplicaHealth>;
  stop(): Promise<void>;
};

export type ReplicaOptions = {
  store: Store;
  name?: string;
  leaseMs: number;
  fingerprint: Fingerprint;
  logger: Logger;
  now?: () => number;
};

export function defaultReplicaName(): string {
  return `${hostname()}:${process.pid}`;
}

export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const { store, logger, leaseMs } = options;
  const name = options.name ?? defaultReplicaName();
  const now = options.now ?? Date.now;
  for (const holder of await formerHolders(store, name)) {
    await store.leases.releaseAll(holder);
    await store.sql.run(FREE_CLAIMS, [holder]);
  }
  await warnAboutDifferentConfigurations(store, name, options.fingerprint, leaseMs, logger);
  await store.replicas.register({
    name,
    host: hostname(),
    pid: process.pid,
    configFingerprint: JSON.stringify(options.fingerprint),
  });
  const keeper = createLeaseKeeper({ leases: store.leases, holder: name, ttlMs: leaseMs, logger, now });
  const bus = createReplicaBus(store.sql, name, logger);
  await bus.ready;
  const heartbeat = setInterval(
    () =>
      void store.replicas
        .seen(name)
        .catch((error: unknown) => logger.warn({ err: error }, "could not record this replica as alive")),
    Math.max(100, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();
  logger.info({ replica: name, engine: store.engine, database: store.sql.label }, "replica started");

  return {
    name,
    keeper,
    bus,
    async health() {
      const started = now();
      try {
        await store.sql.get("SELECT 1 AS one");
        const roundTrip = now() - started;
        const replicas = (await store.replicas.live(leaseMs)).map((replica) => replica.name);
        return {
          name,
          engine: store.engine,
          database: store.sql.label,
          leases: keeper.held(),
          databaseRoundTripMs: roundTrip,
          replicas,
        };
      } catch (error) {
        return {
          name,
          engine: store.engine,
          database: store.sql.label,
          leases: keeper.held(),
          databaseRoundTripMs: null,
          databaseError: (error as Error).message,
          replicas: [],
        };
      }
    },
    async stop() {
      clearInterval(heartbeat);
      await keeper
        .stop()
        .catch((error: unknown) =>
          logger.warn({ err: error }, "could not release this replica's leases; they expire by themselves"),
        );
      await bus.close();
      await store.replicas.forget(name).catch(() => undefined);
    },
  };
}

const FREE_CLAIMS = `UPDATE channel_outbox SET claimed_by = NULL, claim_expires_at = NULL WHERE claimed_by = ? AND status = 'pending'`;
const HOLDERS = `SELECT holder FROM leases UNION SELECT claimed_by AS holder FROM channel_outbox WHERE claimed_by IS NOT NULL AND status = 'pending'`;

/** This replica's own name (a restart under a fixed name), and on SQLite every host:pid holder of this host whose process is gone. */
async function formerHolders(store: Store, name: string): Promise<string[]> {
  const holders = new Set([name]);
  if (store.engine === "sqlite") {
    const host = hostname();
    for (const { holder } of await store.sql.all<{ holder: string }>(HOLDERS)) {
      const match = /^(.*):(\d+)$/.exec(holder);
      if (match && match[1] === host && !processAlive(Number(match[2]))) holders.add(holder);
    }
  }
  return [...holders];
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function warnAboutDifferentConfigurations(
  store: Store,
  name: string,
  mine: Fingerprint,
  leaseMs: number,
  logger: Logger,
): Promise<void> {
  for (const other of await store.replicas.live(leaseMs)) {
    if (other.name === name) continue;
    let theirs: Fingerprint;
    try {
      theirs = JSON.parse(other.configFingerprint) as Fingerprint;
    } catch {
      continue;
    }
    const differing = differingVariables(mine, theirs);
    if (differing.length > 0) {
      logger.warn(
        { replica: name, other: other.name, differing },
        `this replica's configuration differs from replica ${other.name} in: ${differing.join(", ")}; replicas should share one configuration`,
      );
    }
  }
}
