/**
 * An in-memory search index over experience-library index lines, ranking exactly as a
 * scan of every line would (library-search.ts), at a cost that follows the number of
 * matches rather than the size of the library.
 *
 * Each searched field of each document is a slot (`id * 4 + field`). Every pair of
 * adjacent characters (UTF-16 code units) of a lowercased field is a bigram key with a
 * posting list of the slots holding it, in increasing slot order. A term occurs in a
 * field only if all of its bigrams do, so the slots of the term's rarest bigram (narrowed
 * by the next rarest) are the candidates, and `includes` on each candidate decides. This
 * serves Chinese (character bigrams are what a Chinese term is made of) and English alike:
 * a word matches inside a longer one, as a substring always did. Non-ASCII characters also
 * have posting lists of their own, for one-character terms (the word segmenter often cuts
 * `死锁` into `死` and `锁`); a one-character ASCII term (a digit, a stop word's letter) is
 * checked against every field.
 *
 * Documents are added with increasing ids, so posting lists stay sorted by appending
 * (library-postings.ts keeps them packed). A removed document is a tombstone until the
 * owner builds the index afresh (see `worn`).
 */
import {
  FIELD_NAMES,
  FIELD_WEIGHTS,
  indexLineFields,
  type LibraryHit,
  PHRASE_BONUS,
  parseIndexLines,
  queryTerms,
  ranksBefore,
} from "./library-search.js";
import { PostingLists } from "./library-postings.js";
import type { Slicer } from "./library-slices.js";

const FIELDS = FIELD_NAMES.length;
const SLOT_SHIFT = 2;
const FIELD_MASK = FIELDS - 1;
const EMPTY = new Uint32Array(0);
/** Candidate lists longer than this are narrowed by a second bigram before the exact check. */
const NARROW_ABOVE = 32;
/** Removed documents (and, times 64, unfrozen posting entries) tolerated before a fresh build pays. */
const REBUILD_SLACK = 4_096;

export class TermIndex {
  private readonly postings = new PostingLists();
  /** Slots holding a non-ASCII character, by its code unit. */
  private readonly unigrams = new PostingLists();
  /** Lowercased field text per slot. */
  private readonly fields: string[] = [];
  private readonly files: string[] = [];
  private readonly lines: string[] = [];
  private alive = new Uint8Array(64);
  private scores = new Int32Array(64);
  private termStamps = new Uint32Array(64);
  private phraseStamps = new Uint32Array(64);
  private stamp = 0;
  private live = 0;
  /** Index order of the live documents (undefined after a change). */
  private ranks: Uint32Array | undefined;
  private readonly keys: number[] = [];

  /** Documents in the index. */
  get size(): number {
    return this.live;
  }

  /** Removed documents still taking room (until the owner builds a fresh index). */
  get deadCount(): number {
    return this.files.length - this.live;
  }

  /**
   * Whether building the index afresh pays: removed documents outweigh the live ones, or
   * posting entries added since the last freeze reach a quarter of the frozen ones.
   */
  get worn(): boolean {
    const unfrozen = this.postings.unfrozen + this.unigrams.unfrozen;
    const frozen = this.postings.frozen + this.unigrams.frozen;
    return this.deadCount > this.live + REBUILD_SLACK || unfrozen > Math.max(REBUILD_SLACK * 64, frozen / 4);
  }

  /** Packs the posting lists (call once the documents are added, before the index serves). */
  async freeze(slicer?: Slicer): Promise<void> {
    await this.postings.freeze(slicer);
    await this.unigrams.freeze(slicer);
  }

  /** Adds one document by its index line; returns its id. */
  add(file: string, line: string): number {
    const id = this.files.length;
    this.grow(id + 1);
    this.files.push(file);
    this.lines.push(line);
    this.alive[id] = 1;
    this.live += 1;
    this.ranks = undefined;
    const { fields } = indexLineFields(line);
    for (let field = 0; field < FIELDS; field += 1) {
      const text = fields[field] ?? "";
      const slot = id * FIELDS + field;
      this.fields.push(text);
      for (let index = 0; index < text.length; index += 1) {
        const code = text.charCodeAt(index);
        if (code >= 0x80) this.unigrams.append(code, slot);
        if (index + 1 < text.length) this.postings.append((code << 16) | text.charCodeAt(index + 1), slot);
      }
    }
    return id;
  }

  /** Removes a document (a tombstone: its slots stay in the postings, skipped). */
  remove(id: number): void {
    if (this.alive[id] !== 1) return;
    this.alive[id] = 0;
    this.live -= 1;
    this.ranks = undefined;
    this.lines[id] = "";
    for (let field = 0; field < FIELDS; field += 1) this.fields[id * FIELDS + field] = "";
  }

  /** The best `limit` hits for a query, as library-search.ts ranks them. */
  search(query: string, limit: number): LibraryHit[] {
    if (limit <= 0) return [];
    const { phrase, terms } = queryTerms(query);
    this.stamp = this.stamp >= 0xfffffffe ? this.resetStamps() : this.stamp + 1;
    const stamp = this.stamp;
    const touched: number[] = [];
    const { scores, termStamps, phraseStamps } = this;
    // A term repeated, or the phrase equal to a term, is looked up once.
    const found = new Map<string, Uint32Array>();
    const slotsOf = (text: string) => {
      let slots = found.get(text);
      if (slots === undefined) found.set(text, (slots = this.slotsOf(text)));
      return slots;
    };
    for (const term of terms) {
      const slots = slotsOf(term);
      for (let index = 0; index < slots.length; index += 1) {
        const slot = slots[index] as number;
        const id = slot >>> SLOT_SHIFT;
        if (termStamps[id] !== stamp) {
          termStamps[id] = stamp;
          scores[id] = 0;
          touched.push(id);
        }
        (scores[id] as number) += FIELD_WEIGHTS[slot & FIELD_MASK] as number;
      }
    }
    if (phrase.length > 0) {
      const slots = slotsOf(phrase);
      for (let index = 0; index < slots.length; index += 1) {
        const id = (slots[index] as number) >>> SLOT_SHIFT;
        if (phraseStamps[id] === stamp) continue;
        phraseStamps[id] = stamp;
        if (termStamps[id] !== stamp) {
          termStamps[id] = stamp;
          scores[id] = 0;
          touched.push(id);
        }
        (scores[id] as number) += PHRASE_BONUS;
      }
    }
    return this.best(touched, limit).map((id) => ({
      file: this.files[id] as string,
      line: this.lines[id] as string,
      score: scores[id] as number,
    }));
  }

  /** Every live slot whose field contains `text`, in slot order. */
  private slotsOf(text: string): Uint32Array {
    const { alive, fields } = this;
    const code = text.charCodeAt(0);
    if (text.length === 1 && code < 0x80) {
      // A one-character ASCII term: no list of its own, every field is checked.
      const result: number[] = [];
      for (let slot = 0; slot < fields.length; slot += 1)
        if (alive[slot >>> SLOT_SHIFT] === 1 && (fields[slot] as string).includes(text)) result.push(slot);
      return Uint32Array.from(result);
    }
    let candidates: Uint32Array;
    if (text.length === 1) {
      const posting = this.unigrams.get(code);
      if (posting === undefined) return EMPTY;
      candidates = posting;
    } else {
      const lists: Uint32Array[] = [];
      for (const key of this.bigrams(text)) {
        const posting = this.postings.get(key);
        if (posting === undefined || posting.length === 0) return EMPTY;
        lists.push(posting);
      }
      lists.sort((left, right) => left.length - right.length);
      candidates = lists[0] as Uint32Array;
      const second = lists[1];
      if (second !== undefined && candidates.length > NARROW_ABOVE) candidates = intersect(candidates, second);
    }
    // One or two characters: the list is exactly the slots holding the text.
    const exact = text.length <= 2;
    const result = new Uint32Array(candidates.length);
    let count = 0;
    for (let index = 0; index < candidates.length; index += 1) {
      const slot = candidates[index] as number;
      if (alive[slot >>> SLOT_SHIFT] === 1 && (exact || (fields[slot] as string).includes(text)))
        result[count++] = slot;
    }
    return result.subarray(0, count);
  }

  /** The distinct bigram keys of a text (reused scratch array). */
  private bigrams(text: string): number[] {
    const keys = this.keys;
    keys.length = 0;
    for (let index = 0; index + 1 < text.length; index += 1)
      keys.push((text.charCodeAt(index) << 16) | text.charCodeAt(index + 1));
    if (keys.length < 2) return keys;
    keys.sort((left, right) => left - right);
    let unique = 1;
    for (let index = 1; index < keys.length; index += 1)
      if (keys[index] !== keys[unique - 1]) keys[unique++] = keys[index] as number;
    keys.length = unique;
    return keys;
  }

  /** The `limit` best of the touched documents, best first (a small sorted insertion list). */
  private best(touched: number[], limit: number): number[] {
    const { scores } = this;
    const ranks = this.fileRanks();
    // Higher score first; among equal scores the greater file name, which has the lower rank.
    const before = (a: number, b: number) =>
      (scores[a] as number) > (scores[b] as number) ||
      (scores[a] === scores[b] && (ranks[a] as number) < (ranks[b] as number));
    const top: number[] = [];
    for (const id of touched) {
      if (top.length === limit && !before(id, top[limit - 1] as number)) continue;
      let low = 0;
      let high = top.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (before(id, top[middle] as number)) high = middle;
        else low = middle + 1;
      }
      top.splice(low, 0, id);
      if (top.length > limit) top.pop();
    }
    return top;
  }

  /** Each live document's place in index order (greatest file name first), worked out again after a change. */
  private fileRanks(): Uint32Array {
    if (this.ranks !== undefined) return this.ranks;
    const ids: number[] = [];
    for (let id = 0; id < this.files.length; id += 1) if (this.alive[id] === 1) ids.push(id);
    const { files } = this;
    ids.sort((a, b) => (ranksBefore(0, files[a] as string, 0, files[b] as string) ? -1 : 1));
    const ranks = new Uint32Array(this.alive.length);
    ids.forEach((id, rank) => {
      ranks[id] = rank;
    });
    this.ranks = ranks;
    return ranks;
  }

  private grow(count: number): void {
    if (count <= this.alive.length) return;
    const size = Math.max(count, this.alive.length * 2);
    const alive = new Uint8Array(size);
    alive.set(this.alive);
    this.alive = alive;
    this.scores = new Int32Array(size);
    this.termStamps = new Uint32Array(size);
    this.phraseStamps = new Uint32Array(size);
    this.stamp = 0;
  }

  private resetStamps(): number {
    this.termStamps.fill(0);
    this.phraseStamps.fill(0);
    return 1;
  }
}

/** The slots of `small` that `large` also holds (both sorted ascending; galloping through `large`). */
function intersect(small: Uint32Array, other: Uint32Array): Uint32Array {
  const length = other.length;
  const result = new Uint32Array(small.length);
  let count = 0;
  let position = 0;
  for (let index = 0; index < small.length && position < length; index += 1) {
    const slot = small[index] as number;
    // Everything before `low` is smaller than slot; widen [low, high) until it holds the first slot >= it.
    let low = position;
    let high = position + 1;
    let step = 1;
    while (high < length && (other[high - 1] as number) < slot) {
      low = high;
      step *= 2;
      high = Math.min(length, low + step);
    }
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((other[middle] as number) < slot) low = middle + 1;
      else high = middle;
    }
    position = low;
    if (position < length && other[position] === slot) result[count++] = slot;
  }
  return result.subarray(0, count);
}

/** Searches an INDEX.md text (built into a term index for this one search). */
export function searchIndex(indexText: string, query: string, limit: number): LibraryHit[] {
  const index = new TermIndex();
  for (const { line, file } of parseIndexLines(indexText)) index.add(file, line);
  return index.search(query, limit);
}
