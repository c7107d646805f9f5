/**
 * A counting semaphore with a bounded queue: at most `limit` holders at once, at most
 * `queueMax` waiters; past that, `acquire` refuses at once. Each release is honoured once.
 */
import { ToolhostError } from "./toolhost-error.js";

export type Release = () => void;

export class Semaphore {
  private active = 0;
  private readonly waiters: { grant: (release: Release) => void; reject: (error: Error) => void }[] = [];

  constructor(
    private readonly limit: number,
    private readonly queueMax: number,
  ) {}

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** A slot now, or undefined when all are taken (then `acquire` waits for one). */
  tryAcquire(): Release | undefined {
    if (this.active >= this.limit) return undefined;
    this.active += 1;
    return this.releaser();
  }

  acquire(signal?: AbortSignal): Promise<Release> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    if (this.waiters.length >= this.queueMax) {
      return Promise.reject(
        new ToolhostError(
          "TOOLHOST_UNAVAILABLE",
          `busy: ${this.active} calls running and ${this.waiters.length} waiting; try again shortly`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: (release: Release) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(release);
        },
        reject,
      };
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(new ToolhostError("TIMEOUT", "cancelled while waiting for a free slot"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.grant(this.releaser());
      else this.active -= 1;
    };
  }
}
