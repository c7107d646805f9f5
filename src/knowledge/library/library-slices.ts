/**
 * Cooperative time slices for the toolhost child's one thread: long library work (reading
 * every document, checking every file, building the term index) runs until a slice's
 * budget is spent, then yields to the event loop, so the agent's other calls are answered
 * in between. Yielding is `setImmediate`: pending I/O (an incoming call, a finished write)
 * runs before the work resumes.
 */
export class Slicer {
  private started = performance.now();

  constructor(
    private readonly budgetMs: number,
    private readonly onYield: () => void = () => {},
  ) {}

  /** True when this slice's budget is spent: `await slicer.yield()` then. */
  get due(): boolean {
    return performance.now() - this.started >= this.budgetMs;
  }

  async yield(): Promise<void> {
    this.onYield();
    await nextTurn();
    this.started = performance.now();
  }
}

/** Resolves in the check phase of the event loop, after the I/O callbacks that were pending. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Lets every file-system event that happened before the call reach its listener: the
 * second turn starts after a poll for I/O that began after the call, even when the call
 * itself ran inside an I/O callback (whose poll had already happened).
 */
export async function afterPendingEvents(): Promise<void> {
  await nextTurn();
  await nextTurn();
}
