/**
 * Posting lists for the term index: for each key, the slots holding it, in increasing
 * order. Compact once frozen: every list lives in one array (a start and a count per list,
 * a number per key), so a library with tens of thousands of distinct bigrams does not pay
 * an object and a typed array for each. What is appended after a freeze goes to a small
 * growing tail per list; a lookup joins the two (the tail's slots are all greater).
 */
import type { Slicer } from "./library-slices.js";

type Tail = { slots: Uint32Array; length: number };

const EMPTY = new Uint32Array(0);

export class PostingLists {
  private readonly numbers = new Map<number, number>();
  private base: Uint32Array = EMPTY;
  private starts: Uint32Array = new Uint32Array(16);
  private counts: Uint32Array = new Uint32Array(16);
  private tails: (Tail | undefined)[] = [];
  private lists = 0;
  private tailEntries = 0;

  /** Entries appended since the last freeze. */
  get unfrozen(): number {
    return this.tailEntries;
  }

  /** Entries in the frozen array. */
  get frozen(): number {
    return this.base.length;
  }

  /** Appends `slot` to the list of `key`, once (a field's slots are appended together, in order). */
  append(key: number, slot: number): void {
    let list = this.numbers.get(key);
    if (list === undefined) {
      list = this.lists;
      this.lists += 1;
      this.numbers.set(key, list);
      if (list === this.starts.length) {
        this.starts = grown(this.starts);
        this.counts = grown(this.counts);
      }
    }
    let tail = this.tails[list];
    const count = this.counts[list] as number;
    const last =
      tail !== undefined && tail.length > 0
        ? tail.slots[tail.length - 1]
        : count > 0
          ? this.base[(this.starts[list] as number) + count - 1]
          : undefined;
    if (last === slot) return;
    if (tail === undefined) {
      tail = { slots: new Uint32Array(4), length: 0 };
      this.tails[list] = tail;
    } else if (tail.length === tail.slots.length) tail.slots = grown(tail.slots);
    tail.slots[tail.length] = slot;
    tail.length += 1;
    this.tailEntries += 1;
  }

  /** The slots holding `key`, in increasing order; undefined when none does. */
  get(key: number): Uint32Array | undefined {
    const list = this.numbers.get(key);
    if (list === undefined) return undefined;
    const start = this.starts[list] as number;
    const count = this.counts[list] as number;
    const tail = this.tails[list];
    if (tail === undefined || tail.length === 0) return this.base.subarray(start, start + count);
    if (count === 0) return tail.slots.subarray(0, tail.length);
    const joined = new Uint32Array(count + tail.length);
    joined.set(this.base.subarray(start, start + count));
    joined.set(tail.slots.subarray(0, tail.length), count);
    return joined;
  }

  /**
   * Moves every list into one array, in slices. Only for lists no one reads or appends to
   * meanwhile (the keeper freezes an index before it serves).
   */
  async freeze(slicer?: Slicer): Promise<void> {
    const base = new Uint32Array(this.base.length + this.tailEntries);
    const starts = new Uint32Array(Math.max(16, this.lists));
    const counts = new Uint32Array(Math.max(16, this.lists));
    let offset = 0;
    for (let list = 0; list < this.lists; list += 1) {
      if (slicer?.due) await slicer.yield();
      const start = this.starts[list] as number;
      const count = this.counts[list] as number;
      starts[list] = offset;
      base.set(this.base.subarray(start, start + count), offset);
      offset += count;
      const tail = this.tails[list];
      if (tail !== undefined) {
        base.set(tail.slots.subarray(0, tail.length), offset);
        offset += tail.length;
      }
      counts[list] = offset - (starts[list] as number);
    }
    this.base = base;
    this.starts = starts;
    this.counts = counts;
    this.tails = [];
    this.tailEntries = 0;
  }
}

function grown(array: Uint32Array): Uint32Array {
  const larger = new Uint32Array(array.length * 2);
  larger.set(array);
  return larger;
}
