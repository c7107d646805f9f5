/**
 * The replica machinery on a real store: the lease keeper, leadership, the replica bus
 * (LISTEN/NOTIFY on PostgreSQL), configuration fingerprints and startReplica. Two replicas
 * on PostgreSQL are two stores (two pools) on one database; on SQLite, one store that two
 * keepers share. Leases are short (600 ms) and the tests wait for conditions, not times.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { configFingerprint, differingVariables, PER_REPLICA_VARIABLES } from "../../src/replica/config-fingerprint.js";
import { createLeaseKeeper } from "../../src/replica/lease-keeper.js";
import { runAsLeader, type LeaderWork } from "../../src/replica/leader.js";
import { createReplicaBus, type ReplicaEvent } from "../../src/replica/replica-bus.js";
import { startReplica } from "../../src/replica/replica.js";
import { systemClock } from "../../src/store/clock.js";
import type { LeasesStore } from "../../src/store/leases-store.js";
import type { Engine } from "../../src/store/sql/sql-driver.js";
import { openStore, type Store } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const TTL = 600;

type LogLine = { level: number; msg: string; [field: string]: unknown };

/** A pino logger whose JSON lines the test reads. */
function capturedLogger() {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

const until = (check: () => void | Promise<void>, timeout = 5_000) => vi.waitFor(check, { timeout, interval: 20 });

/** Lets time pass (a condition on the clock, not an assertion about durations). */
const pass = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Two replicas' stores on one database: two stores on PostgreSQL, the same store twice on
 * SQLite (one process, one file). `close` closes what was opened.
 */
async function twoReplicaStores(engine: Engine): Promise<{ one: Store; two: Store; close(): Promise<void> }> {
  if (engine === "sqlite") {
    const store = await openTestStore("sqlite");
    return { one: store, two: store, close: () => store.close() };
  }
  const url = await testDatabaseUrl();
  const one = await openStore(url, systemClock);
  const two = await openStore(url, systemClock);
  return {
    one,
    two,
    async close() {
      await two.close();
      await one.close();
    },
  };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

describe.each(STORE_ENGINES)("lease keeper on %s", (engine) => {
  it("renews what it holds, so the lease outlives its ttl while held and nobody else takes it", async () => {
    const store = await openTestStore(engine);
    const keeper = createLeaseKeeper({
      leases: store.leases,
      holder: "a",
      ttlMs: TTL,
      logger: capturedLogger().logger,
    });
    expect(await keeper.acquire("job")).toBe(true);
    const first = (await store.leases.get("job")) as { expiresAt: number; acquiredAt: number };
    const begun = Date.now();
    await until(() => expect(Date.now()).toBeGreaterThan(begun + 3 * TTL), 10_000);
    const now = (await store.leases.get("job")) as { holder: string; expiresAt: number; acquiredAt: number };
    expect(now.holder).toBe("a");
    expect(now.acquiredAt).toBe(first.acquiredAt);
    expect(now.expiresAt).toBeGreaterThan(first.expiresAt + 2 * TTL);
    expect(now.expiresAt).toBeGreaterThanOrEqual(Date.now());
    expect(await store.leases.acquire("job", "b", TTL)).toBe(false);
    expect(keeper.isHeld("job")).toBe(true);
    expect(keeper.held()).toEqual(["job"]);
    await keeper.stop();
    await store.close();
  });

  it("calls onLost when a renewal finds another holder; confirm is false from then on", async () => {
    const store = await openTestStore(engine);
    const { logger, lines } = capturedLogger();
    const keeper = createLeaseKeeper({ leases: store.leases, holder: "a", ttlMs: TTL, logger });
    let lost = 0;
    expect(await keeper.acquire("chat:1", () => (lost += 1))).toBe(true);
    expect(await keeper.acquire("chat:2")).toBe(true);
    expect(await keeper.confirm("chat:1")).toBe(true);

    // Another replica has it now (as after an expiry a's renewals missed).
    await store.leases.release("chat:1", "a");
    expect(await store.leases.acquire("chat:1", "b", 60_000)).toBe(true);
    // confirm fences a write before the keeper noticed.
    expect(await keeper.confirm("chat:1")).toBe(false);
    await until(() => expect(lost).toBe(1));
    expect(keeper.isHeld("chat:1")).toBe(false);
    expect(keeper.held()).toEqual(["chat:2"]);
    expect(await keeper.confirm("chat:1")).toBe(false);
    expect((await store.leases.get("chat:1"))?.holder).toBe("b");
    expect(lines.find((line) => line.msg.includes("lease lost"))).toMatchObject({ lease: "chat:1", holder: "a" });
    // The other lease is unaffected.
    expect(await keeper.confirm("chat:2")).toBe(true);
    await pass(TTL);
    expect(lost).toBe(1);
    await keeper.stop();
    await store.close();
  });

  it("stop() releases everything it holds and takes nothing afterwards", async () => {
    const store = await openTestStore(engine);
    const keeper = createLeaseKeeper({
      leases: store.leases,
      holder: "a",
      ttlMs: TTL,
      logger: capturedLogger().logger,
    });
    await keeper.acquire("x");
    await keeper.acquire("y");
    expect(await store.leases.acquire("z", "b", TTL)).toBe(true);
    expect((await store.leases.heldBy("a")).map((lease) => lease.name)).toEqual(["x", "y"]);
    await keeper.stop();
    expect(await store.leases.heldBy("a")).toEqual([]);
    expect(await store.leases.get("x")).toBeUndefined();
    expect(keeper.held()).toEqual([]);
    expect(await keeper.acquire("x")).toBe(false);
    expect(await keeper.confirm("x")).toBe(false);
    expect((await store.leases.live()).map((lease) => lease.holder)).toEqual(["b"]);
    await store.close();
  });

  it("confirm() answers (does not throw) when the keeper stops while it waits for the database", async () => {
    const store = await openTestStore(engine);
    const keeper = createLeaseKeeper({
      leases: store.leases,
      holder: "a",
      ttlMs: TTL,
      logger: capturedLogger().logger,
    });
    for (let round = 0; round < 5; round += 1) {
      expect(await keeper.acquire(`x${round}`)).toBe(true);
    }
    const confirms = Promise.all([0, 1, 2, 3, 4].map((round) => keeper.confirm(`x${round}`)));
    await keeper.stop();
    const answers = await confirms;
    for (const answer of answers) expect(typeof answer).toBe("boolean");
    expect(await store.leases.heldBy("a")).toEqual([]);
    await store.close();
  });

  it("counts a lease lost once the database has not answered for a whole lease, not before", async () => {
    const keeperStore = await openTestStore(engine);
    let now = 1_000_000;
    const { logger, lines } = capturedLogger();
    const keeper = createLeaseKeeper({ leases: keeperStore.leases, holder: "a", ttlMs: TTL, logger, now: () => now });
    let lost = 0;
    await keeper.acquire("job", () => (lost += 1));
    await keeperStore.close();
    // Renewals fail; within the lease that is a warning and a retry.
    await until(() =>
      expect(lines.filter((line) => line.msg.includes("could not renew a lease")).length).toBeGreaterThanOrEqual(2),
    );
    expect(lost).toBe(0);
    expect(keeper.isHeld("job")).toBe(true);
    now += TTL;
    await until(() => expect(lost).toBe(1));
    expect(keeper.isHeld("job")).toBe(false);
    expect(lines.find((line) => line.msg.includes("lease lost"))?.why).toMatch(/not renewed for a whole lease/);
    await keeper.stop();
  });

  it("a renewal answered after the lease was released and taken again does not drop the new lease", async () => {
    const store = await openTestStore(engine);
    // The real leases store, with one renewal held at two points so the test chooses the interleaving.
    let hold: { called: () => void; before: Promise<void>; ran: () => void; after: Promise<void> } | undefined;
    const leases: LeasesStore = {
      ...store.leases,
      async renew(name, holder, ttlMs) {
        const held = hold;
        if (!held) return store.leases.renew(name, holder, ttlMs);
        hold = undefined;
        held.called();
        await held.before;
        const ok = await store.leases.renew(name, holder, ttlMs);
        held.ran();
        await held.after;
        return ok;
      },
    };
    const keeper = createLeaseKeeper({ leases, holder: "a", ttlMs: TTL, logger: capturedLogger().logger });
    const called = gate();
    const before = gate();
    const ran = gate();
    const after = gate();
    hold = { called: called.open, before: before.wait, ran: ran.open, after: after.wait };
    let firstLost = 0;
    let secondLost = 0;
    await keeper.acquire("chat:1", () => (firstLost += 1));
    await called.wait; // a renewal of chat:1 is on its way
    // Meanwhile the chat's work ends and begins again (the scheduler releases and takes the chat back).
    await keeper.release("chat:1");
    before.open();
    await ran.wait; // the renewal found no row: it was released
    expect(await keeper.acquire("chat:1", () => (secondLost += 1))).toBe(true);
    after.open();
    // The keeper goes on renewing the lease it holds now.
    const taken = (await store.leases.get("chat:1")) as { expiresAt: number };
    await until(async () => {
      if (secondLost === 0) expect((await store.leases.get("chat:1"))?.expiresAt).toBeGreaterThan(taken.expiresAt);
    });
    expect(secondLost).toBe(0);
    expect(firstLost).toBe(0);
    expect(keeper.isHeld("chat:1")).toBe(true);
    await keeper.stop();
    await store.close();
  });
});

/** A leader's work that records its starts and stops. */
function recordedWork(name: string, log: string[]): LeaderWork {
  return {
    start: async () => void log.push(`${name} start`),
    stop: async () => void log.push(`${name} stop`),
  };
}

describe.each(STORE_ENGINES)("leadership on %s", (engine) => {
  async function twoCandidates() {
    const stores = await twoReplicaStores(engine);
    const { logger } = capturedLogger();
    const keepers = {
      a: createLeaseKeeper({ leases: stores.one.leases, holder: "a", ttlMs: TTL, logger }),
      b: createLeaseKeeper({ leases: stores.two.leases, holder: "b", ttlMs: TTL, logger }),
    };
    const log: string[] = [];
    const a = runAsLeader(keepers.a, "receive:bot", recordedWork("a", log), logger);
    const b = runAsLeader(keepers.b, "receive:bot", recordedWork("b", log), logger);
    await Promise.all([a.settled, b.settled]);
    const [leader, follower, leaderKeeper, followerKeeper] = a.isLeader()
      ? ([a, b, keepers.a, keepers.b] as const)
      : ([b, a, keepers.b, keepers.a] as const);
    const names = a.isLeader() ? (["a", "b"] as const) : (["b", "a"] as const);
    return {
      stores,
      log,
      leader,
      follower,
      leaderKeeper,
      followerKeeper,
      leaderName: names[0],
      followerName: names[1],
    };
  }

  it("runs the work on exactly one of two replicas", async () => {
    const { stores, log, leader, follower, leaderKeeper, followerKeeper, leaderName } = await twoCandidates();
    expect(leader.isLeader()).toBe(true);
    expect(follower.isLeader()).toBe(false);
    expect(log).toEqual([`${leaderName} start`]);
    // Several attempts of the follower later, still one leader.
    await pass(2 * TTL);
    expect(log).toEqual([`${leaderName} start`]);
    expect(follower.isLeader()).toBe(false);
    expect((await stores.one.leases.get("receive:bot"))?.holder).toBe(leaderName);
    await follower.stop();
    await leader.stop();
    expect(log).toEqual([`${leaderName} start`, `${leaderName} stop`]);
    expect(await stores.one.leases.get("receive:bot")).toBeUndefined();
    await leaderKeeper.stop();
    await followerKeeper.stop();
    await stores.close();
  });

  it("gives the lease back when the work stops on its own (polling cut off), and the work starts again", async () => {
    const stores = await twoReplicaStores(engine);
    const { logger } = capturedLogger();
    const keeper = createLeaseKeeper({ leases: stores.one.leases, holder: "a", ttlMs: TTL, logger });
    const log: string[] = [];
    let fail: ((error: Error) => void) | undefined;
    const leadership = runAsLeader(
      keeper,
      "receive:bot",
      {
        start: async (failed) => {
          log.push("start");
          fail = failed;
        },
        stop: async () => void log.push("stop"),
      },
      logger,
    );
    await leadership.settled;
    expect(log).toEqual(["start"]);
    fail?.(new Error("409: terminated by other getUpdates request"));
    await until(() => expect(log).toEqual(["start", "stop", "start"]));
    expect(leadership.isLeader()).toBe(true);
    await leadership.stop();
    await keeper.stop();
    await stores.close();
  });

  it("stops the chat's work at once when a fenced write finds the lease taken (confirm)", async () => {
    const stores = await twoReplicaStores(engine);
    const { logger } = capturedLogger();
    let now = Date.now();
    const a = createLeaseKeeper({ leases: stores.one.leases, holder: "a", ttlMs: 60_000, logger, now: () => now });
    let lost = 0;
    expect(await a.acquire("chat:bot:1", () => (lost += 1))).toBe(true);
    // Another replica takes the name over (as after an expiry): a's next fenced write learns it.
    await stores.two.sql.run("UPDATE leases SET holder = 'b' WHERE name = 'chat:bot:1'");
    now += 1;
    expect(await a.confirm("chat:bot:1")).toBe(false);
    expect(lost).toBe(1);
    expect(a.isHeld("chat:bot:1")).toBe(false);
    await a.stop();
    await stores.close();
  });

  it("hands the work over when the leader stops", async () => {
    const { stores, log, leader, follower, leaderKeeper, followerKeeper, leaderName, followerName } =
      await twoCandidates();
    await leader.stop();
    await until(() => expect(follower.isLeader()).toBe(true));
    expect(log).toEqual([`${leaderName} start`, `${leaderName} stop`, `${followerName} start`]);
    expect(leader.isLeader()).toBe(false);
    await follower.stop();
    await leaderKeeper.stop();
    await followerKeeper.stop();
    await stores.close();
  });

  it("takes over when the leader's keeper stops renewing", async () => {
    const { stores, log, leader, follower, leaderKeeper, followerKeeper, leaderName, followerName } =
      await twoCandidates();
    await leaderKeeper.stop();
    await until(() => expect(follower.isLeader()).toBe(true));
    expect(log).toEqual([`${leaderName} start`, `${followerName} start`]);
    expect((await stores.two.leases.get("receive:bot"))?.holder).toBe(followerName);
    await follower.stop();
    await leader.stop();
    await followerKeeper.stop();
    await stores.close();
  });

  it("stops the work when the lease is lost, and takes it again once free", async () => {
    const { stores, log, leader, follower, leaderKeeper, followerKeeper, leaderName } = await twoCandidates();
    // A third replica took the lease (the leader's renewals missed a whole lease).
    await stores.one.leases.release("receive:bot", leaderName);
    expect(await stores.one.leases.acquire("receive:bot", "c", 60_000)).toBe(true);
    await until(() => expect(log).toEqual([`${leaderName} start`, `${leaderName} stop`]));
    expect(leader.isLeader()).toBe(false);
    expect(follower.isLeader()).toBe(false);
    await stores.one.leases.release("receive:bot", "c");
    await until(() => expect(leader.isLeader() || follower.isLeader()).toBe(true));
    expect(log).toHaveLength(3);
    expect(leader.isLeader() && follower.isLeader()).toBe(false);
    await follower.stop();
    await leader.stop();
    await leaderKeeper.stop();
    await followerKeeper.stop();
    await stores.close();
  });

  it.runIf(engine === "postgres")(
    "takes over from a leader whose database connection died, and that leader stops its work",
    async () => {
      const { stores, log, leader, follower, leaderKeeper, followerKeeper, leaderName, followerName } =
        await twoCandidates();
      const leaderStore = leaderName === "a" ? stores.one : stores.two;
      const followerStore = leaderName === "a" ? stores.two : stores.one;
      await leaderStore.close();
      await until(() => expect(follower.isLeader()).toBe(true), 10_000);
      await until(() => expect(leader.isLeader()).toBe(false), 10_000);
      expect([...log].sort()).toEqual([`${followerName} start`, `${leaderName} start`, `${leaderName} stop`].sort());
      expect((await followerStore.leases.get("receive:bot"))?.holder).toBe(followerName);
      await follower.stop();
      await leader.stop();
      await leaderKeeper.stop();
      await followerKeeper.stop();
      await followerStore.close();
    },
  );
});

describe.each(STORE_ENGINES)("replica bus on %s", (engine) => {
  it.runIf(engine === "postgres")(
    "carries an event from one replica to another's subscribers, once, and not back to the publisher as news",
    async () => {
      const stores = await twoReplicaStores(engine);
      const { logger } = capturedLogger();
      const busA = createReplicaBus(stores.one.sql, "a", logger);
      const busB = createReplicaBus(stores.two.sql, "b", logger);
      await Promise.all([busA.ready, busB.ready]);
      const heardA: [ReplicaEvent, string][] = [];
      const heardB: [ReplicaEvent, string][] = [];
      busA.subscribe((event, from) => heardA.push([event, from]));
      const unsubscribe = busB.subscribe((event, from) => heardB.push([event, from]));

      const skills: ReplicaEvent = { topic: "skills-changed", agentId: "main" };
      await busA.publish(skills);
      // The publisher hears its own news at once, in process.
      expect(heardA).toEqual([[skills, "a"]]);
      await until(() => expect(heardB).toEqual([[skills, "a"]]), 2_000);

      // b answers; by the time a hears it, a's own echo would have arrived before it.
      const library: ReplicaEvent = { topic: "library-switched", agentId: "helper" };
      await busB.publish(library);
      await until(
        () =>
          expect(heardA).toEqual([
            [skills, "a"],
            [library, "b"],
          ]),
        2_000,
      );
      expect(heardB).toEqual([
        [skills, "a"],
        [library, "b"],
      ]);

      unsubscribe();
      await busA.publish(skills);
      await until(() => expect(heardA).toHaveLength(3), 2_000);
      await busB.publish(library);
      await until(() => expect(heardA).toHaveLength(4), 2_000);
      expect(heardB).toHaveLength(2);

      await busA.close();
      await busB.close();
      await stores.close();
    },
  );

  it.runIf(engine === "postgres")(
    "listens again after its connection is dropped, and tells itself news may have been missed",
    async () => {
      const stores = await twoReplicaStores(engine);
      const { logger, lines } = capturedLogger();
      const busA = createReplicaBus(stores.one.sql, "a", logger);
      await busA.ready;
      const heardA: [ReplicaEvent, string][] = [];
      busA.subscribe((event, from) => heardA.push([event, from]));
      const [listener] = await stores.two.sql.all<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN laoding_events'",
      );
      expect(listener).toBeDefined();
      // The server ends a's listening connection (b's pool runs the statement).
      await stores.two.sql.get("SELECT pg_terminate_backend(?)", [(listener as { pid: number }).pid]);
      await until(() =>
        expect(lines.some((line) => line.msg.includes("the replica bus connection dropped"))).toBe(true),
      );
      await until(
        () => expect(heardA).toEqual([[{ topic: "skills-changed", agentId: "*" }, "(bus reconnected)"]]),
        5_000,
      );
      // News from another replica (what its bus sends) reaches a again.
      const later: ReplicaEvent = { topic: "library-switched", agentId: "main" };
      await stores.two.sql.run("SELECT pg_notify('laoding_events', ?)", [JSON.stringify({ from: "b", event: later })]);
      await until(() => expect(heardA).toContainEqual([later, "b"]), 2_000);
      await busA.close();
      await stores.close();
    },
  );

  it.runIf(engine === "postgres")(
    "a closed bus leaves its connection to the pool: the server dropping it later does not end the process",
    async () => {
      const stores = await twoReplicaStores(engine);
      const bus = createReplicaBus(stores.one.sql, "a", capturedLogger().logger);
      await bus.ready;
      const [listener] = await stores.two.sql.all<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN laoding_events'",
      );
      expect(listener).toBeDefined();
      await bus.close();
      // The connection is idle in a's pool now; the server ends it (a restart, an idle timeout, an administrator).
      await stores.two.sql.get("SELECT pg_terminate_backend(?)", [(listener as { pid: number }).pid]);
      await until(async () =>
        expect(
          await stores.two.sql.all("SELECT pid FROM pg_stat_activity WHERE pid = ?", [
            (listener as { pid: number }).pid,
          ]),
        ).toEqual([]),
      );
      await pass(100);
      // The pool dropped it and goes on answering.
      expect(await stores.one.sql.get("SELECT 1 AS one")).toEqual({ one: 1 });
      await stores.close();
    },
  );

  it("delivers a replica's own news in process", async () => {
    const store = await openTestStore(engine);
    const bus = createReplicaBus(store.sql, "solo", capturedLogger().logger);
    await bus.ready;
    const heard: [ReplicaEvent, string][] = [];
    bus.subscribe((event, from) => heard.push([event, from]));
    bus.subscribe(() => {
      throw new Error("a listener that fails does not stop the others");
    });
    bus.subscribe((event, from) => heard.push([event, `${from} again`]));
    await bus.publish({ topic: "skills-changed", agentId: "main" });
    expect(heard).toEqual([
      [{ topic: "skills-changed", agentId: "main" }, "solo"],
      [{ topic: "skills-changed", agentId: "main" }, "solo again"],
    ]);
    await bus.close();
    await store.close();
  });
});

describe("configuration fingerprint", () => {
  const shared = {
    LLM_MODEL: "gpt-4o-mini",
    LLM_API_KEY: "sk-very-secret-value-1234",
    TELEGRAM_BOT_TOKEN: "123:abc",
    MESSAGE_CAP: "20",
  };

  it("finds nothing differing between replicas with the same configuration", () => {
    const files = { "agents.json": '{"agents":[]}' };
    expect(
      differingVariables(configFingerprint(shared, files), configFingerprint({ ...shared }, { ...files })),
    ).toEqual([]);
  });

  it("names a variable whose value differs, or that only one side sets, and a differing file", () => {
    const mine = configFingerprint(shared, { "agents.json": "A" });
    expect(
      differingVariables(mine, configFingerprint({ ...shared, LLM_MODEL: "gpt-4o" }, { "agents.json": "A" })),
    ).toEqual(["LLM_MODEL"]);
    expect(
      differingVariables(
        mine,
        configFingerprint({ ...shared, EXTRA: "1", LLM_MODEL: undefined }, { "agents.json": "B" }),
      ),
    ).toEqual(["EXTRA", "LLM_MODEL", "agents.json"]);
  });

  it("ignores the variables meant to differ per replica", () => {
    const one = configFingerprint({
      ...shared,
      REPLICA_NAME: "bot-a",
      LOG_DIR: "/var/log/a",
      LOG_LEVEL: "info",
      AGENT_WORKSPACE_DIR: "/a",
      DATABASE_POOL_MAX: "5",
    });
    const two = configFingerprint({
      ...shared,
      REPLICA_NAME: "bot-b",
      LOG_DIR: "/var/log/b",
      LOG_LEVEL: "debug",
      AGENT_WORKSPACE_DIR: "/b",
      CONFIG_ENV_FILE: "/etc/b",
    });
    expect(differingVariables(one, two)).toEqual([]);
    for (const name of PER_REPLICA_VARIABLES) expect(one[name]).toBeUndefined();
  });

  it("never holds a value, only short hashes", () => {
    const fingerprint = configFingerprint(shared, { "agents.json": '{"secret":"agent-file-content"}' });
    const text = JSON.stringify(fingerprint);
    for (const value of [...Object.values(shared), "agent-file-content"]) expect(text).not.toContain(value);
    expect(Object.keys(fingerprint).sort()).toEqual([
      "LLM_API_KEY",
      "LLM_MODEL",
      "MESSAGE_CAP",
      "TELEGRAM_BOT_TOKEN",
      "agents.json",
    ]);
    for (const hash of Object.values(fingerprint)) expect(hash).toMatch(/^[0-9a-f]{16}$/);
    // The same value under two names does not hash alike (a variable's hash cannot be matched against another's).
    expect(configFingerprint({ A: "same", B: "same" }).A).not.toBe(configFingerprint({ A: "same", B: "same" }).B);
  });
});

describe.each(STORE_ENGINES)("startReplica on %s", (engine) => {
  const config = { LLM_MODEL: "gpt-4o-mini", LLM_API_KEY: "sk-shared-secret-987", MESSAGE_CAP: "20" };

  it("frees what an earlier run held at start (its own name's; on SQLite also a finished process of this host), never a live process's", async () => {
    const store = await openTestStore(engine);
    // A process of this host that is gone: a child that has exited.
    const gone = spawnSync(process.execPath, ["-e", "process.pid"]).pid as number;
    const deadHolder = `${hostname()}:${gone}`;
    const liveHolder = `${hostname()}:${process.pid}`;
    await store.leases.acquire("chat:telegram:main:1", "r1", 60_000);
    await store.leases.acquire("chat:telegram:main:2", "other-replica", 60_000);
    await store.leases.acquire("chat:telegram:main:3", deadHolder, 60_000);
    await store.leases.acquire("chat:telegram:main:4", liveHolder, 60_000);
    // A reply part claimed by the finished process is free again at once.
    await store.channels.storeReply({ botKey: "telegram:main", chatId: "3", parts: ["hello"] });
    expect(await store.chatWork.claimNextPart("telegram:main", "3", deadHolder, 60_000)).toMatchObject({
      text: "hello",
    });
    const replica = await startReplica({
      store,
      name: "r1",
      leaseMs: TTL,
      fingerprint: configFingerprint(config),
      logger: capturedLogger().logger,
    });
    const left = (await store.leases.live()).map((lease) => [lease.name, lease.holder]);
    // A running `laoding chat` beside a bot (SQLite) leaves the bot's leases alone.
    expect(left).toEqual(
      engine === "sqlite"
        ? [
            ["chat:telegram:main:2", "other-replica"],
            ["chat:telegram:main:4", liveHolder],
          ]
        : [
            ["chat:telegram:main:2", "other-replica"],
            ["chat:telegram:main:3", deadHolder],
            ["chat:telegram:main:4", liveHolder],
          ],
    );
    if (engine === "sqlite")
      expect(await store.chatWork.claimNextPart("telegram:main", "3", "r1", 60_000)).toMatchObject({ text: "hello" });
    expect(await replica.keeper.acquire("chat:telegram:main:1")).toBe(true);
    const health = await replica.health();
    expect(health).toMatchObject({ name: "r1", engine, leases: ["chat:telegram:main:1"], replicas: ["r1"] });
    expect(health.databaseRoundTripMs).toBeTypeOf("number");
    await replica.stop();
    expect(await store.leases.heldBy("r1")).toEqual([]);
    expect(await store.replicas.live(60_000)).toEqual([]);
    await store.close();
  });

  it("warns, naming the differing variables, when a live replica runs another configuration", async () => {
    const stores = await twoReplicaStores(engine);
    const first = capturedLogger();
    const second = capturedLogger();
    const third = capturedLogger();
    const r1 = await startReplica({
      store: stores.one,
      name: "r1",
      leaseMs: TTL,
      fingerprint: configFingerprint({ ...config, LOG_DIR: "/a" }),
      logger: first.logger,
    });
    const r2 = await startReplica({
      store: stores.two,
      name: "r2",
      leaseMs: TTL,
      fingerprint: configFingerprint({ ...config, LLM_MODEL: "gpt-4o", LOG_DIR: "/b" }),
      logger: second.logger,
    });
    const r3 = await startReplica({
      store: stores.two,
      name: "r3",
      leaseMs: TTL,
      fingerprint: configFingerprint({ ...config, LOG_DIR: "/c" }),
      logger: third.logger,
    });

    const warnings = second.lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ replica: "r2", other: "r1", differing: ["LLM_MODEL"] });
    expect(warnings[0]?.msg).toContain("LLM_MODEL");
    expect(warnings[0]?.msg).toContain("r1");
    expect(JSON.stringify(second.lines)).not.toContain("gpt-4o");
    expect(JSON.stringify(second.lines)).not.toContain("sk-shared-secret-987");
    // r3 agrees with r1 and differs from r2 only.
    expect(third.lines.filter((line) => line.level === 40).map((line) => [line.other, line.differing])).toEqual([
      ["r2", ["LLM_MODEL"]],
    ]);
    expect(first.lines.filter((line) => line.level === 40)).toEqual([]);
    // Every replica sees the others alive.
    expect((await r1.health()).replicas).toEqual(["r1", "r2", "r3"]);

    await r3.stop();
    await r2.stop();
    expect((await r1.health()).replicas).toEqual(["r1"]);
    await r1.stop();
    await stores.close();
  });
});
