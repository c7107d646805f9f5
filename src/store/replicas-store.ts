/**
 * The replicas running on this database: each registers at start and is "seen" with every
 * renewal, so /v1/health and a starting replica know who else is alive and whether their
 * configurations agree (a fingerprint per variable, never a value).
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type ReplicaRow = {
  name: string;
  host: string;
  pid: number;
  configFingerprint: string;
  startedAt: number;
  seenAt: number;
};

export type ReplicasStore = ReturnType<typeof createReplicasStore>;

const REGISTER = `INSERT INTO replicas (name, host, pid, config_fingerprint, started_at, seen_at) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, config_fingerprint = excluded.config_fingerprint,
    started_at = excluded.started_at, seen_at = excluded.seen_at`;
const SEEN = `UPDATE replicas SET seen_at = ? WHERE name = ?`;
const LIVE = `SELECT name, host, pid, config_fingerprint AS configFingerprint, started_at AS startedAt, seen_at AS seenAt
  FROM replicas WHERE seen_at >= ? ORDER BY name`;
const FORGET = `DELETE FROM replicas WHERE name = ?`;

export function createReplicasStore(sql: SqlDriver, clock: Clock) {
  return {
    async register(replica: { name: string; host: string; pid: number; configFingerprint: string }): Promise<void> {
      const now = clock.now();
      await sql.run(REGISTER, [replica.name, replica.host, replica.pid, replica.configFingerprint, now, now]);
    },
    async seen(name: string): Promise<void> {
      await sql.run(SEEN, [clock.now(), name]);
    },
    /** Replicas seen within `withinMs`. */
    live: (withinMs: number): Promise<ReplicaRow[]> => sql.all<ReplicaRow>(LIVE, [clock.now() - withinMs]),
    async forget(name: string): Promise<void> {
      await sql.run(FORGET, [name]);
    },
  };
}
