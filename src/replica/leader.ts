/**
 * Work only one replica may do at a time (Telegram long polling, the Feishu long
 * connection): the replica holding the named lease does it; the others try to take the
 * lease every third of REPLICA_LEASE_MS, so one of them takes over within a lease of the
 * holder's death. A holder that loses its lease stops the work at once.
 */
import type { Logger } from "pino";
import type { LeaseKeeper } from "./lease-keeper.js";

export type LeaderWork = {
  /** Starts the work; `failed` is called when it stops on its own later (the lease is then given back and retried). */
  start(failed: (error: Error) => void): Promise<void>;
  stop(): Promise<void>;
};

export type Leadership = {
  /** Resolves once this replica is leader or has seen the work held by another one (start-up waits for one or the other). */
  readonly settled: Promise<void>;
  isLeader(): boolean;
  /** Stops the work if held, releases the lease, stops trying. */
  stop(): Promise<void>;
};

export function runAsLeader(keeper: LeaseKeeper, name: string, work: LeaderWork, logger: Logger): Leadership {
  let leader = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let transition: Promise<void> = Promise.resolve();
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));

  const step = (change: () => Promise<void>) => (transition = transition.then(change, change));

  async function attempt(): Promise<void> {
    if (stopped || leader) return settle();
    let taken = false;
    try {
      taken = await keeper.acquire(name, () => void step(lost));
    } catch (error) {
      logger.warn({ err: error, lease: name }, "could not ask for leadership; trying again");
    }
    if (taken && !stopped) {
      leader = true;
      logger.info({ lease: name, replica: keeper.holder }, "this replica leads");
      try {
        await work.start((error) => void step(() => gaveUp(error)));
      } catch (error) {
        leader = false;
        await keeper.release(name).catch(() => undefined);
        settle();
        throw error;
      }
    }
    settle();
  }

  /** The work stopped on its own: give the lease back so the next attempt (here or elsewhere) starts it again. */
  async function gaveUp(error: Error): Promise<void> {
    if (!leader) return;
    leader = false;
    logger.warn(
      { err: error, lease: name },
      "the leader's work stopped on its own; giving the lease back to start it again",
    );
    await work.stop().catch(() => undefined);
    await keeper.release(name).catch(() => undefined);
  }

  async function lost(): Promise<void> {
    if (!leader) return;
    leader = false;
    logger.warn({ lease: name }, "leadership lost; stopping");
    await work
      .stop()
      .catch((error: unknown) => logger.warn({ err: error, lease: name }, "stopping the leader's work failed"));
  }

  const first = step(attempt);
  timer = setInterval(
    () => void step(attempt).catch((error: unknown) => logger.error({ err: error, lease: name }, "taking over failed")),
    Math.max(100, Math.floor(keeper.ttlMs / 3)),
  );
  timer.unref();

  return {
    // A failure to start the work on the first attempt is start-up's failure.
    settled: Promise.race([first, settled]),
    isLeader: () => leader,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await step(async () => {
        if (!leader) return;
        leader = false;
        await work.stop();
        await keeper.release(name);
      });
    },
  };
}
