/**
 * Bounds on the walks of file.list, file.glob and file.grep, so that a huge tree costs a
 * bounded amount of work and memory per call and never holds the child's one thread for
 * long: a walk stops after MAX_VISITED entries or once the answer it collects passes its
 * byte cap (the answer would be truncated anyway), and it yields to the event loop every
 * few milliseconds so other sessions' calls to the same agent are answered meanwhile.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { encodedLength } from "./truncate-output.js";

/** Entries a single walk visits at most. */
export const MAX_VISITED = 200_000;
/** How long a walk may run before letting other requests in. */
const SLICE_MS = 15;

export type WalkBudget = {
  /** Counts one visited entry; false once the walk must stop. */
  visit(): boolean;
  /** Adds one line to the answer; false once the answer is full. */
  collect(line: string): boolean;
  /** Whether this slice of work has run long enough that pause would yield (cheap: no promise). */
  due(): boolean;
  /** Yields to the event loop when this slice of work has run long enough. */
  pause(signal?: AbortSignal): Promise<void>;
  /** Why the walk stopped early, if it did (for the marker at the end of the answer). */
  readonly stoppedBecause: string | undefined;
};

export function walkBudget(maxAnswerBytes: number): WalkBudget {
  let visited = 0;
  let bytes = 0;
  let stoppedBecause: string | undefined;
  let sliceStart = Date.now();
  return {
    visit() {
      visited += 1;
      if (visited > MAX_VISITED)
        stoppedBecause ??= `stopped after visiting ${MAX_VISITED} entries; narrow the path or the pattern`;
      return stoppedBecause === undefined;
    },
    collect(line) {
      bytes += encodedLength(line) + 2;
      if (bytes > maxAnswerBytes)
        stoppedBecause ??= `stopped: the answer reached ${maxAnswerBytes} bytes; narrow the path or the pattern`;
      return stoppedBecause === undefined;
    },
    due() {
      return Date.now() - sliceStart >= SLICE_MS;
    },
    async pause(signal) {
      if (Date.now() - sliceStart < SLICE_MS) return;
      await nextTurn();
      sliceStart = Date.now();
      if (signal?.aborted) stoppedBecause ??= "cancelled";
    },
    get stoppedBecause() {
      return stoppedBecause;
    },
  };
}
