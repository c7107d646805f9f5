/**
 * `transaction(work, { lock })`: read-then-write transactions of several replicas take
 * turns on a named lock (a transaction-scoped advisory lock on PostgreSQL; SQLite's
 * transactions take turns anyway). The replicas are two stores, two pools, on one database.
 */
import { describe, expect, it, vi } from "vitest";
import type { TransactionOptions } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function createCounter(store: Store): Promise<void> {
  await store.sql.exec("CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)");
  await store.sql.run("INSERT INTO counter (id, value) VALUES (1, 0)");
}

async function counter(store: Store): Promise<number> {
  return ((await store.sql.get<{ value: number }>("SELECT value FROM counter WHERE id = 1")) as { value: number })
    .value;
}

/** Reads the counter, lets `between` run (an await: another replica's turn), then writes counter + 1: the pattern a lock must guard. */
function increment(
  store: Store,
  options: TransactionOptions | undefined,
  between: () => Promise<void> = () => sleep(2),
): Promise<void> {
  return store.transaction(async () => {
    const value = await counter(store);
    await between();
    await store.sql.run("UPDATE counter SET value = ? WHERE id = 1", [value + 1]);
  }, options);
}

/** Resolves for every caller once `parties` callers are waiting. */
function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return () => {
    arrived += 1;
    if (arrived === parties) open();
    return opened;
  };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Transactions of this database waiting for an advisory lock (seen from any connection). */
async function waitingForAdvisoryLocks(store: Store): Promise<number> {
  const row = await store.sql.get<{ n: number }>(
    "SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted = false AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  );
  return row?.n ?? 0;
}

/** Two stores on one fresh PostgreSQL database: two replicas. */
async function twoReplicas(): Promise<[Store, Store]> {
  const url = await testDatabaseUrl();
  const one = await openStore(url, { now: () => Date.now() });
  const two = await openStore(url, { now: () => Date.now() });
  await createCounter(one);
  return [one, two];
}

describe.each(STORE_ENGINES)("transaction lock on %s", (engine) => {
  it.runIf(engine === "postgres")(
    "without a lock two replicas that both read before either writes lose an update",
    async () => {
      const [one, two] = await twoReplicas();
      const bothRead = barrier(2);
      await Promise.all([increment(one, undefined, bothRead), increment(two, undefined, bothRead)]);
      // READ COMMITTED: both read 0 and both wrote 1.
      expect(await counter(one)).toBe(1);
      await two.close();
      await one.close();
    },
  );

  it.runIf(engine === "postgres")(
    "with a lock the second replica waits for the first to commit before it reads",
    async () => {
      const [one, two] = await twoReplicas();
      const firstHolds = gate();
      let firstRead = false;
      let secondRead: number | undefined;
      const first = increment(one, { lock: "counter" }, async () => {
        firstRead = true;
        await firstHolds.wait;
      });
      await vi.waitFor(() => expect(firstRead).toBe(true), { timeout: 5_000, interval: 10 });
      const second = two.transaction(
        async () => {
          secondRead = await counter(two);
          await two.sql.run("UPDATE counter SET value = ? WHERE id = 1", [secondRead + 1]);
        },
        { lock: "counter" },
      );
      // The second transaction is blocked on the advisory lock, not merely slow.
      await vi.waitFor(async () => expect(await waitingForAdvisoryLocks(one)).toBe(1), {
        timeout: 5_000,
        interval: 20,
      });
      expect(secondRead).toBeUndefined();
      // Another name is not held back by it.
      await two.transaction(async () => expect(await counter(two)).toBe(0), { lock: "something-else" });

      firstHolds.open();
      await Promise.all([first, second]);
      expect(secondRead).toBe(1);
      expect(await counter(two)).toBe(2);
      expect(await waitingForAdvisoryLocks(one)).toBe(0);
      await two.close();
      await one.close();
    },
  );

  it.runIf(engine === "postgres")(
    "with a lock N concurrent read-then-write increments from two replicas give N",
    async () => {
      const [one, two] = await twoReplicas();
      const runs: Promise<void>[] = [];
      for (let index = 0; index < 12; index += 1)
        runs.push(increment(index % 2 === 0 ? one : two, { lock: "counter" }));
      await Promise.all(runs);
      expect(await counter(one)).toBe(12);
      // The lock was the transactions' own: released by their commits.
      await one.transaction(async () => expect(await counter(one)).toBe(12), { lock: "counter" });
      await two.close();
      await one.close();
    },
  );

  it.runIf(engine === "postgres")(
    "a lock taken by a nested transaction joins the outer one and is held until it commits",
    async () => {
      const [one, two] = await twoReplicas();
      const outerHolds = gate();
      let innerDone = false;
      const outer = one.transaction(
        async () => {
          // The same lock again, nested: joins (a new connection would wait for itself forever).
          await one.transaction(
            async () => {
              expect(one.sql.inTransaction()).toBe(true);
              await one.sql.run("UPDATE counter SET value = 5 WHERE id = 1");
            },
            { lock: "x" },
          );
          // Another lock from a nested transaction is taken on the outer transaction's connection.
          await one.transaction(async () => undefined, { lock: "y" });
          innerDone = true;
          await outerHolds.wait;
        },
        { lock: "x" },
      );
      await vi.waitFor(() => expect(innerDone).toBe(true), { timeout: 5_000, interval: 10 });
      let otherRan = false;
      const other = two.transaction(
        async () => {
          otherRan = true;
          expect(await counter(two)).toBe(5);
        },
        { lock: "y" },
      );
      await vi.waitFor(async () => expect(await waitingForAdvisoryLocks(one)).toBe(1), {
        timeout: 5_000,
        interval: 20,
      });
      expect(otherRan).toBe(false);
      outerHolds.open();
      await Promise.all([outer, other]);
      expect(otherRan).toBe(true);
      await two.close();
      await one.close();
    },
  );

  it("a nested transaction with a lock joins the outer one: rolled back with it", async () => {
    const store = await openTestStore(engine);
    await createCounter(store);
    await expect(
      store.transaction(
        async () => {
          await store.transaction(
            async () => {
              expect(store.sql.inTransaction()).toBe(true);
              await store.sql.run("UPDATE counter SET value = 7 WHERE id = 1");
            },
            { lock: "x" },
          );
          expect(await counter(store)).toBe(7);
          throw new Error("undo");
        },
        { lock: "x" },
      ),
    ).rejects.toThrow("undo");
    expect(await counter(store)).toBe(0);
    await store.close();
  });

  it("with a lock concurrent increments of one store give N (SQLite: the lock is accepted, transactions take turns)", async () => {
    const store = await openTestStore(engine);
    await createCounter(store);
    await Promise.all(Array.from({ length: 10 }, () => increment(store, { lock: "counter" })));
    expect(await counter(store)).toBe(10);
    await store.close();
  });
});
