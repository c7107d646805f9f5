/**
 * Holds this replica's leases and renews them together every third of the lease, so a
 * replica that stops (or is killed) frees everything it held within REPLICA_LEASE_MS.
 * A renewal the database refuses means another replica took the name: its holders hear
 * of it (`onLost`) and stop what the lease guarded. When the database cannot be reached,
 * a lease counts as lost once its last successful renewal is a whole lease old, since by
 * then another replica may hold it.
 */
import type { Logger } from "pino";
import type { LeasesStore } from "../store/leases-store.js";

export type LeaseKeeperOptions = {
  leases: LeasesStore;
  /** This replica's name. */
  holder: string;
  ttlMs: number;
  logger: Logger;
  now?: () => number;
};

export type LeaseKeeper = {
  readonly holder: string;
  readonly ttlMs: number;
  /** Takes `name` (free, expired or already ours) and keeps renewing it; true when held. */
  acquire(name: string, onLost?: () => void): Promise<boolean>;
  /** Fences a write: true when the lease is still ours (renewed now, in the caller's transaction if any). */
  confirm(name: string): Promise<boolean>;
  release(name: string): Promise<void>;
  isHeld(name: string): boolean;
  held(): string[];
  /** Stops renewing and releases everything held. */
  stop(): Promise<void>;
};

type Held = { renewedAt: number; onLost: (() => void) | undefined };

export function createLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { leases, holder, ttlMs, logger } = options;
  const now = options.now ?? Date.now;
  const held = new Map<string, Held>();
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;
  let stopped = false;

  /** `lease` is the entry the failed renewal was for: one released and taken again meanwhile is another entry, and stays. */
  const lose = (name: string, lease: Held, why: string) => {
    if (held.get(name) !== lease) return;
    held.delete(name);
    logger.warn({ lease: name, holder, why }, "lease lost; stopping what it guarded");
    lease.onLost?.();
  };

  async function renewAll(): Promise<void> {
    for (const [name, lease] of [...held]) {
      // Timed from when the renewal was sent: the database extends the lease from about then.
      const sentAt = now();
      try {
        if (await leases.renew(name, holder, ttlMs)) lease.renewedAt = sentAt;
        else lose(name, lease, "another replica holds it now");
      } catch (error) {
        if (now() - lease.renewedAt >= ttlMs)
          lose(name, lease, `not renewed for a whole lease: ${(error as Error).message}`);
        else logger.warn({ err: error, lease: name }, "could not renew a lease; trying again");
      }
    }
  }

  function schedule(): void {
    if (timer || stopped) return;
    timer = setInterval(
      () => {
        if (renewing) {
          // A renewal that hangs (a silent network partition) must not hide that the leases ran out.
          for (const [name, lease] of [...held])
            if (now() - lease.renewedAt >= ttlMs) lose(name, lease, "the renewal has not answered for a whole lease");
          return;
        }
        renewing = renewAll().finally(() => (renewing = undefined));
      },
      Math.max(100, Math.floor(ttlMs / 3)),
    );
    timer.unref();
  }

  return {
    holder,
    ttlMs,
    async acquire(name, onLost) {
      if (stopped) return false;
      if (!(await leases.acquire(name, holder, ttlMs))) return false;
      held.set(name, { renewedAt: now(), onLost });
      schedule();
      return true;
    },
    async confirm(name) {
      // The entry is kept from before the await: a release or stop() meanwhile removes it from `held`.
      const lease = held.get(name);
      if (!lease) return false;
      const ok = await leases.renew(name, holder, ttlMs);
      if (ok) lease.renewedAt = now();
      // Another replica holds it: what it guarded stops now, not at the next renewal.
      else lose(name, lease, "another replica holds it now");
      return ok;
    },
    async release(name) {
      held.delete(name);
      await leases.release(name, holder);
    },
    isHeld: (name) => held.has(name),
    held: () => [...held.keys()],
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await renewing;
      const names = [...held.keys()];
      held.clear();
      for (const name of names) await leases.release(name, holder).catch(() => undefined);
    },
  };
}
