/**
 * One task at a time per chat, in arrival order; chats run in parallel. `close()` stops
 * starting new tasks (they stay queued in the store and run after a restart) and
 * resolves once the running ones have finished.
 */
export class PerChatQueue {
  private readonly waiting = new Map<string, (() => Promise<void>)[]>();
  private readonly running = new Set<string>();
  private readonly idleWaiters: (() => void)[] = [];
  private closed = false;

  push(chatKey: string, task: () => Promise<void>): void {
    if (this.closed) return;
    const queue = this.waiting.get(chatKey) ?? [];
    queue.push(task);
    this.waiting.set(chatKey, queue);
    if (!this.running.has(chatKey)) void this.drain(chatKey);
  }

  /** Chats with a task running. */
  get busy(): number {
    return this.running.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting.clear();
    if (this.running.size === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(chatKey: string): Promise<void> {
    this.running.add(chatKey);
    try {
      for (let task = this.next(chatKey); task; task = this.next(chatKey)) {
        // A task handles its own failures; one that throws anyway must not stop the chat.
        await task().catch(() => undefined);
      }
    } finally {
      this.running.delete(chatKey);
      if (this.running.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private next(chatKey: string): (() => Promise<void>) | undefined {
    if (this.closed) return undefined;
    const queue = this.waiting.get(chatKey);
    const task = queue?.shift();
    if (queue && queue.length === 0) this.waiting.delete(chatKey);
    return task;
  }
}
