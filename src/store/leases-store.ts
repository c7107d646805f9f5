/**
 * Named leases: "this replica holds this name until then". One atomic upsert takes a name
 * that is free, expired or already ours, on SQLite and PostgreSQL alike (PostgreSQL's
 * ON CONFLICT DO UPDATE locks the row, so two replicas racing for a name get one winner).
 * Times come from the replica's clock: hosts need synchronised clocks (NTP), with skew
 * well under REPLICA_LEASE_MS.
 */
import type { Clock } from "./clock.js";
import type { SqlDriver } from "./sql/sql-driver.js";

export type LeaseRow = { name: string; holder: string; expiresAt: number; acquiredAt: number };

export type LeasesStore = ReturnType<typeof createLeasesStore>;

const ACQUIRE = `INSERT INTO leases (name, holder, expires_at, acquired_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
    acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END
  WHERE leases.holder = excluded.holder OR leases.expires_at < ?`;
const RENEW = `UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?`;
const RELEASE = `DELETE FROM leases WHERE name = ? AND holder = ?`;
const RELEASE_ALL = `DELETE FROM leases WHERE holder = ?`;
const ONE = `SELECT name, holder, expires_at AS expiresAt, acquired_at AS acquiredAt FROM leases WHERE name = ?`;
const HELD_BY = `SELECT name, holder, expires_at AS expiresAt, acquired_at AS acquiredAt FROM leases WHERE holder = ? AND expires_at >= ? ORDER BY name`;
const LIVE = `SELECT name, holder, expires_at AS expiresAt, acquired_at AS acquiredAt FROM leases WHERE expires_at >= ? ORDER BY name`;

export function createLeasesStore(sql: SqlDriver, clock: Clock) {
  return {
    /** Takes `name` for `holder` until now + ttlMs when it is free, expired or the holder's already; true when taken. */
    async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
      const now = clock.now();
      return (await sql.run(ACQUIRE, [name, holder, now + ttlMs, now, now])).changes === 1;
    },
    /** Extends the holder's lease; false when it is no longer the holder's (expired and taken by another). */
    async renew(name: string, holder: string, ttlMs: number): Promise<boolean> {
      return (await sql.run(RENEW, [clock.now() + ttlMs, name, holder])).changes === 1;
    },
    async release(name: string, holder: string): Promise<void> {
      await sql.run(RELEASE, [name, holder]);
    },
    /** Everything a replica holds, given up when it stops cleanly. */
    async releaseAll(holder: string): Promise<number> {
      return (await sql.run(RELEASE_ALL, [holder])).changes;
    },
    get: (name: string): Promise<LeaseRow | undefined> => sql.get<LeaseRow>(ONE, [name]),
    heldBy: (holder: string): Promise<LeaseRow[]> => sql.all<LeaseRow>(HELD_BY, [holder, clock.now()]),
    live: (): Promise<LeaseRow[]> => sql.all<LeaseRow>(LIVE, [clock.now()]),
  };
}
