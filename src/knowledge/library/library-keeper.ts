/**
 * The experience library as the agent's toolhost child keeps it: every document's index
 * line in memory with a term index over them (library.search answers from it), kept in
 * step with the folder, and INDEX.md rewritten from it in the background.
 *
 * How it stays in step, cheapest first:
 * - the write tools say which file they wrote (`noteWritten`);
 * - a watch on the folder (inotify) names every file created, changed, moved or removed,
 *   by anyone (the shell, an operator, another process); a burst is handled once, shortly after;
 * - before answering, a check waits for the events already queued, compares the folder's
 *   own mtime (a create, delete or rename changes it) and re-lists the names when it moved;
 * - every file's mtime, ctime, size and inode are compared in the background at most once
 *   a minute (and before every answer when the folder cannot be watched).
 * Only a document whose identity changed is read again. Work on many files runs in time
 * slices that yield (library-slices.ts), and INDEX.md is written with asynchronous I/O, so
 * the child answers other calls meanwhile.
 *
 * INDEX.md keeps the invariants of library-index.ts (temp file and rename, the same text
 * renderIndex gives for the documents), and its mtime is the time up to which the state it
 * shows had seen every change, so the stateless check (ensureFresh) of another process
 * agrees. When a child starts, an index line whose document is older than INDEX.md is taken
 * from INDEX.md instead of reading the document again.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  type FSWatcher,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  watch,
} from "node:fs";
import { type FileHandle, open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { INDEX_FILE, isLibraryDocName, parseLibraryDoc } from "./library-doc.js";
import {
  INDEX_HEADERS,
  type IndexResult,
  indexHead,
  indexLineFile,
  LibraryIndexError,
  type LibraryLocale,
  readHead,
  renderIndexLine,
} from "./library-index.js";
import type { LibraryHit } from "./library-search.js";
import { afterPendingEvents, Slicer } from "./library-slices.js";
import { TermIndex } from "./library-term-index.js";

export type LibraryKeeperOptions = {
  /** The library's real path. */
  dir: string;
  locale: LibraryLocale;
  /** Longest stretch of work before yielding to other calls (default 4 ms). */
  sliceMs?: number;
  /** A burst of folder events is handled this long after its first event (default 50 ms). */
  debounceMs?: number;
  /** Every file is compared at most this often, in the background (default 60 s). */
  verifyEveryMs?: number;
  /** Watch the folder (default true); without a watch every check compares every file. */
  watch?: boolean;
};

export type LibraryKeeperStats = {
  /** Full builds (the first check, a rebuild, the folder replaced). */
  builds: number;
  /** Documents read (their first 8 KiB). */
  reads: number;
  /** Comparisons of every file's identity. */
  scans: number;
  /** INDEX.md writes completed. */
  indexWrites: number;
  /** Times long work yielded to the event loop. */
  yields: number;
};

export type RefreshResult = IndexResult;

type Doc = { id: number; ident: string; line: string };
type Stale = "document-newer" | "documents-changed" | "header-changed" | "missing" | "rebuild";
type IndexFileText = {
  ident: string;
  mtimeMs: number;
  hash: string;
  headerOk: boolean;
  lines: Map<string, string>;
  listed: string[];
};

const STALE_RANK: Record<Stale, number> = {
  "document-newer": 1,
  "documents-changed": 2,
  "header-changed": 3,
  missing: 4,
  rebuild: 5,
};
/**
 * File times come from a clock that may lag the one Date.now() reads by a tick: INDEX.md's
 * mtime is set this much before the check whose state it shows, so a document written
 * just after is never taken as older than the index (unless a document the state includes
 * is newer still: then just past that one).
 */
const CLOCK_MARGIN_MS = 50;
/** Past a document's time by more than a float's rounding of seconds since the epoch. */
const PAST_NEWEST_MS = 0.002;
const WRITE_CHUNK_LINES = 250;
const WRITE_RETRY_MS = 5_000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export class LibraryKeeper {
  readonly dir: string;
  readonly locale: LibraryLocale;
  readonly stats: LibraryKeeperStats = { builds: 0, reads: 0, scans: 0, indexWrites: 0, yields: 0 };
  private readonly sliceMs: number;
  private readonly debounceMs: number;
  private readonly verifyEveryMs: number;
  private readonly watchEnabled: boolean;

  private docs = new Map<string, Doc>();
  /** Document names in index order (newest file name first). */
  private names: string[] = [];
  private index = new TermIndex();
  private readonly dirty = new Set<string>();
  private built = false;
  /** The folder's inode and birth time: a folder removed and made again may get the same inode. */
  private dirIdentity = "";
  private dirMark = "";
  private needsScan = true;
  /** Bumped whenever the documents' state changes. */
  private version = 0;
  /** The state has seen every change made before this time (ms since the epoch): INDEX.md's mtime. */
  private asOf = 0;
  /** The latest mtime or ctime of a document the state read (ms). */
  private newest = 0;

  private fileVersion = -1;
  private fileIdent: string | undefined;
  private fileHash: string | undefined;
  private stale: Stale | undefined;
  private writing: Promise<void> | undefined;
  private writeAgain = false;
  private writesStarted = 0;
  private writeError: Error | undefined;
  /** After a failed write, checks leave INDEX.md alone until then (an explicit refresh tries at once). */
  private writeRetryAt = 0;

  private watcher: FSWatcher | undefined;
  private watchRetryAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastVerify = 0;
  private verifying = false;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(options: LibraryKeeperOptions) {
    this.dir = options.dir;
    this.locale = options.locale;
    this.sliceMs = options.sliceMs ?? 4;
    this.debounceMs = options.debounceMs ?? 50;
    this.verifyEveryMs = options.verifyEveryMs ?? 60_000;
    this.watchEnabled = options.watch ?? true;
  }

  /** Documents in the library, as of the last check. */
  get count(): number {
    return this.docs.size;
  }

  /** Whether `close` was called (a closed keeper answers nothing more). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether the folder is watched right now. */
  get watching(): boolean {
    return this.watcher !== undefined;
  }

  /** Ranked hits for a query, after bringing the state up to date with every change made before the call. */
  async search(query: string, limit: number): Promise<{ hits: LibraryHit[]; count: number }> {
    await afterPendingEvents();
    return this.serial(async () => {
      await this.update(false);
      return { hits: this.index.search(query, limit), count: this.docs.size };
    });
  }

  /**
   * Brings the state up to date and INDEX.md with it. `rebuild` reads every document
   * again; `rewrite` writes INDEX.md even when it looks current (it was edited by hand);
   * `since` (a value `noteWritten` returned) also counts a background write after that
   * point as this refresh's regeneration.
   */
  async refresh(options: { rebuild?: boolean; rewrite?: boolean; since?: number } = {}): Promise<RefreshResult> {
    await afterPendingEvents();
    const rebuild = options.rebuild === true;
    // A write that starts from now on shows this call's state (writes run one at a time).
    const writesBefore = this.writesStarted;
    const { target, reason } = await this.serial(async () => {
      await this.update(rebuild);
      return { target: this.version, reason: this.fileVersion === this.version ? undefined : this.stale };
    });
    const fresh = rebuild || options.rewrite === true;
    if (reason === undefined && !fresh) {
      const regenerated = options.since !== undefined && this.stats.indexWrites > options.since;
      return { regenerated, count: this.docs.size };
    }
    await this.ensureWritten(target, fresh ? writesBefore + 1 : 0);
    return { regenerated: true, count: this.docs.size, reason: fresh ? "rebuild" : (reason ?? "documents-changed") };
  }

  /** A write tool wrote `path` (a real path): the document is checked at the next refresh. */
  noteWritten(path: string): number {
    const name = basename(path);
    if (dirname(path) === this.dir && isLibraryDocName(name)) this.dirty.add(name);
    return this.stats.indexWrites;
  }

  close(): void {
    this.closed = true;
    this.dropWatcher();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private serial<T>(work: () => Promise<T> | T): Promise<T> {
    const result = this.chain.then(work);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async update(rebuild: boolean): Promise<void> {
    if (this.closed) throw new LibraryIndexError(`the library ${this.dir} is no longer kept here`);
    const startedAt = Date.now();
    let dirStats: Stats;
    try {
      dirStats = statSync(this.dir);
    } catch (error) {
      throw new LibraryIndexError(`cannot read the library ${this.dir}: ${errorCode(error)}`);
    }
    if (rebuild || !this.built || folderIdentity(dirStats) !== this.dirIdentity) await this.build(dirStats, rebuild);
    else if (!this.ensureWatcher() || this.needsScan) await this.scan(dirStats);
    else if (folderMark(dirStats) !== this.dirMark) await this.relist(dirStats);
    if (this.dirty.size > 0) await this.applyDirty();
    if (this.index.worn) await this.reindex();
    this.asOf = Math.max(startedAt - CLOCK_MARGIN_MS, Math.min(startedAt, this.newest + PAST_NEWEST_MS));
    // Without a watch nothing says what changes next: the next check compares every file.
    if (!this.watcher) this.needsScan = true;
    this.checkIndexFile();
    // A write in flight goes on until INDEX.md shows the latest version.
    if (this.fileVersion !== this.version && !this.writing && Date.now() >= this.writeRetryAt)
      void this.scheduleWrite();
    this.maybeVerify();
  }

  /** Reads the whole library afresh (index lines of documents older than INDEX.md are taken from it). */
  private async build(dirStats: Stats, rebuild: boolean): Promise<void> {
    this.stats.builds += 1;
    // Watch first: a change made while the folder is read is reported, and checked after.
    this.dropWatcher();
    this.ensureWatcher();
    const slicer = this.slicer();
    const trusted = rebuild ? undefined : await this.readIndexFile(slicer);
    const names = (await readdir(this.dir)).filter(isLibraryDocName).sort(newestFirst);
    const docs = new Map<string, Doc>();
    const index = new TermIndex();
    const kept: string[] = [];
    let reread = 0;
    for (const name of names) {
      if (slicer.due) await slicer.yield();
      const path = join(this.dir, name);
      const stats = lstatQuiet(path);
      if (!stats?.isFile()) continue;
      let line = trusted?.lines.get(name);
      // Taken from INDEX.md only when clearly older than it (a change in its last clock tick may be missing).
      const trust = trusted !== undefined && Math.max(stats.mtimeMs, stats.ctimeMs) < trusted.mtimeMs - CLOCK_MARGIN_MS;
      if (line === undefined || !trust) {
        line = this.readLine(name, path);
        if (line === undefined) continue;
        reread += 1;
      }
      docs.set(name, { id: index.add(name, line), ident: identOf(stats), line });
      kept.push(name);
      this.newest = Math.max(this.newest, stats.mtimeMs, stats.ctimeMs);
    }
    await index.freeze(slicer);
    this.docs = docs;
    this.index = index;
    this.names = kept;
    this.built = true;
    this.needsScan = false;
    this.dirIdentity = folderIdentity(dirStats);
    this.dirMark = folderMark(dirStats);
    this.lastVerify = Date.now();
    this.version += 1;
    const reason: Stale | undefined = rebuild
      ? "rebuild"
      : trusted === undefined
        ? "missing"
        : !trusted.headerOk
          ? "header-changed"
          : !sameList(trusted.listed, kept)
            ? "documents-changed"
            : reread > 0
              ? "document-newer"
              : undefined;
    if (reason === undefined && trusted !== undefined) this.adoptIndexFile(trusted.ident, trusted.hash);
    else this.markStale(reason ?? "missing", true);
  }

  /** Compares every file's identity with the state; what differs is checked next. */
  private async scan(dirStats: Stats | undefined): Promise<void> {
    this.stats.scans += 1;
    const slicer = this.slicer();
    const listed = await readdir(this.dir);
    const present = new Set<string>();
    for (const name of listed) {
      if (slicer.due) await slicer.yield();
      if (!isLibraryDocName(name)) continue;
      present.add(name);
      const stats = lstatQuiet(join(this.dir, name));
      const ident = stats?.isFile() ? identOf(stats) : undefined;
      if (ident !== this.docs.get(name)?.ident) this.dirty.add(name);
    }
    for (const name of this.docs.keys()) if (!present.has(name)) this.dirty.add(name);
    this.lastVerify = Date.now();
    // The background comparison (no dirStats) leaves the check's own marks alone.
    if (dirStats === undefined) return;
    this.dirMark = folderMark(dirStats);
    this.needsScan = false;
  }

  /** The folder's mtime moved (a create, delete or rename): names that came or went are checked next. */
  private async relist(dirStats: Stats): Promise<void> {
    const present = new Set((await readdir(this.dir)).filter(isLibraryDocName));
    for (const name of present) if (!this.docs.has(name)) this.dirty.add(name);
    for (const name of this.docs.keys()) if (!present.has(name)) this.dirty.add(name);
    this.dirMark = folderMark(dirStats);
  }

  private async applyDirty(): Promise<void> {
    const names = [...this.dirty];
    this.dirty.clear();
    const slicer = this.slicer();
    let listChanged = false;
    let docChanged = false;
    for (const name of names) {
      if (slicer.due) await slicer.yield();
      const outcome = this.applyOne(name);
      if (outcome === "added" || outcome === "removed") listChanged = true;
      else if (outcome === "changed") docChanged = true;
    }
    if (!listChanged && !docChanged) return;
    this.version += 1;
    this.markStale(listChanged ? "documents-changed" : "document-newer", false);
  }

  /** Checks one name against the folder; reads the document only when its identity changed. */
  private applyOne(name: string): "added" | "removed" | "changed" | "same" {
    const path = join(this.dir, name);
    const old = this.docs.get(name);
    const stats = lstatQuiet(path);
    const ident = stats?.isFile() ? identOf(stats) : undefined;
    if (ident !== undefined && ident === old?.ident) return "same";
    if (stats !== undefined) this.newest = Math.max(this.newest, stats.mtimeMs, stats.ctimeMs);
    const line = ident === undefined ? undefined : this.readLine(name, path);
    if (line === undefined || ident === undefined) {
      if (old === undefined) return "same";
      this.index.remove(old.id);
      this.docs.delete(name);
      this.names.splice(this.position(name), 1);
      return "removed";
    }
    if (old === undefined) {
      this.docs.set(name, { id: this.index.add(name, line), ident, line });
      this.names.splice(this.position(name), 0, name);
      return "added";
    }
    // Any change counts (INDEX.md is rewritten, so its mtime stays past every document's).
    old.ident = ident;
    if (old.line !== line) {
      this.index.remove(old.id);
      old.id = this.index.add(name, line);
      old.line = line;
    }
    return "changed";
  }

  /** The term index built afresh (and packed) once it is worn by many changes. */
  private async reindex(): Promise<void> {
    const slicer = this.slicer();
    const index = new TermIndex();
    const ids: number[] = [];
    for (const name of this.names) {
      if (slicer.due) await slicer.yield();
      ids.push(index.add(name, (this.docs.get(name) as Doc).line));
    }
    await index.freeze(slicer);
    this.names.forEach((name, position) => {
      (this.docs.get(name) as Doc).id = ids[position] as number;
    });
    this.index = index;
  }

  private readLine(name: string, path: string): string | undefined {
    this.stats.reads += 1;
    const head = readHead(path);
    return head === undefined ? undefined : renderIndexLine(parseLibraryDoc(name, head), this.locale);
  }

  /** Where `name` is, or belongs, in index order. */
  private position(name: string): number {
    let low = 0;
    let high = this.names.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.names[middle] as string) > name) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private markStale(reason: Stale, replace: boolean): void {
    this.fileVersion = -1;
    if (replace || this.stale === undefined || STALE_RANK[reason] > STALE_RANK[this.stale]) this.stale = reason;
  }

  private adoptIndexFile(ident: string, hash: string): void {
    this.fileVersion = this.version;
    this.fileIdent = ident;
    this.fileHash = hash;
    this.stale = undefined;
  }

  /** INDEX.md changed under us (removed, edited by hand, written by another process): rewritten unless it says what ours does. */
  private checkIndexFile(): void {
    // A write in flight records what it wrote; a stale INDEX.md is rewritten anyway.
    if (this.writing || this.fileVersion !== this.version) return;
    const path = join(this.dir, INDEX_FILE);
    const stats = lstatQuiet(path);
    if (!stats?.isFile()) {
      this.fileIdent = undefined;
      this.markStale("missing", false);
      return;
    }
    const ident = identOf(stats);
    if (ident === this.fileIdent) return;
    const text = readWhole(path);
    if (text !== undefined && sha1(text) === this.fileHash) {
      this.fileIdent = ident;
      return;
    }
    this.fileIdent = undefined;
    const headerOk = text?.toString("utf8", 0, 512).startsWith(`${INDEX_HEADERS[this.locale]}\n`) ?? false;
    this.markStale(headerOk ? "documents-changed" : "header-changed", false);
  }

  private async readIndexFile(slicer: Slicer): Promise<IndexFileText | undefined> {
    let fd: number;
    try {
      fd = openSync(join(this.dir, INDEX_FILE), READ_FLAGS);
    } catch {
      return undefined;
    }
    let stats: Stats;
    let buffer: Buffer;
    try {
      stats = fstatSync(fd);
      if (!stats.isFile()) return undefined;
      buffer = readAll(fd, stats.size);
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
    const header = Buffer.from(`${INDEX_HEADERS[this.locale]}\n`, "utf8");
    const result: IndexFileText = {
      ident: identOf(stats),
      mtimeMs: stats.mtimeMs,
      hash: sha1(buffer),
      headerOk: buffer.subarray(0, header.length).equals(header),
      lines: new Map(),
      listed: [],
    };
    if (!result.headerOk) return result;
    // Decoded line by line (a newline byte never occurs inside a UTF-8 character), in slices.
    for (let start = 0; start < buffer.length; ) {
      if (slicer.due) await slicer.yield();
      const found = buffer.indexOf(10, start);
      const end = found < 0 ? buffer.length : found;
      // Only index lines matter: they start with "- ".
      if (buffer[start] === 0x2d && buffer[start + 1] === 0x20) {
        const line = buffer.toString("utf8", start, end);
        const file = indexLineFile(line);
        if (file !== undefined) {
          result.lines.set(file, line);
          result.listed.push(file);
        }
      }
      start = end + 1;
    }
    return result;
  }

  /** Waits until INDEX.md shows version `target` and the `writes`-th write has completed. */
  private async ensureWritten(target: number, writes: number): Promise<void> {
    while (this.fileVersion < target || this.stats.indexWrites < writes) {
      if (this.closed) throw new LibraryIndexError(`the library ${this.dir} is no longer kept here`);
      const before = this.stats.indexWrites;
      if (this.writing) {
        // The write loop goes on while INDEX.md is behind; one more is asked only when a later write must run.
        if (this.writesStarted < writes) this.writeAgain = true;
        await this.writing;
      } else await this.scheduleWrite();
      if (this.stats.indexWrites === before && this.writeError) throw this.writeError;
    }
  }

  private scheduleWrite(): Promise<void> {
    if (this.writing) {
      this.writeAgain = true;
      return this.writing;
    }
    this.writing = this.writeLoop();
    return this.writing;
  }

  /** Writes until INDEX.md shows the latest state; never rejects (a failure waits in writeError). */
  private async writeLoop(): Promise<void> {
    try {
      do {
        this.writeAgain = false;
        try {
          await this.writeOnce();
          this.writeError = undefined;
          this.writeRetryAt = 0;
        } catch (error) {
          this.writeError = error instanceof Error ? error : new Error(String(error));
          this.writeRetryAt = Date.now() + WRITE_RETRY_MS;
          return;
        }
      } while ((this.writeAgain || this.fileVersion !== this.version) && !this.closed);
    } finally {
      this.writing = undefined;
    }
  }

  private async writeOnce(): Promise<void> {
    this.writesStarted += 1;
    const snapshot = await this.serial(() => ({
      version: this.version,
      asOf: this.asOf,
      lines: this.names.map((name) => (this.docs.get(name) as Doc).line),
    }));
    if (this.closed) return;
    // The text is encoded in slices (another call may run between two), then written in one go.
    const slicer = this.slicer();
    const hash = createHash("sha1");
    const chunks = [Buffer.from(`${indexHead(snapshot.lines.length, this.locale)}\n`, "utf8")];
    for (let start = 0; start < snapshot.lines.length; start += WRITE_CHUNK_LINES) {
      if (slicer.due) await slicer.yield();
      chunks.push(Buffer.from(`${snapshot.lines.slice(start, start + WRITE_CHUNK_LINES).join("\n")}\n`, "utf8"));
    }
    const text = Buffer.concat(chunks);
    hash.update(text);
    // Our own temp file and rename move the folder's mtime: no reason to list it again, unless it had moved before.
    const folderBefore = folderMarkQuiet(this.dir);
    const temp = join(this.dir, `.${INDEX_FILE}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
    let handle: FileHandle;
    try {
      handle = await open(
        temp,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
    } catch (error) {
      throw new LibraryIndexError(`cannot write the index of ${this.dir}: ${errorCode(error)}`);
    }
    let renamed = false;
    try {
      for (let offset = 0; offset < text.length; ) offset += (await handle.write(text, offset)).bytesWritten;
      await handle.utimes(Date.now() / 1000, snapshot.asOf / 1000);
      await rename(temp, join(this.dir, INDEX_FILE));
      renamed = true;
      const folderAfter = folderMarkQuiet(this.dir);
      const stats = await handle.stat();
      this.fileVersion = snapshot.version;
      this.fileIdent = identOf(stats);
      this.fileHash = hash.digest("hex");
      if (folderBefore !== undefined && folderBefore === this.dirMark && folderAfter !== undefined)
        this.dirMark = folderAfter;
      if (this.fileVersion === this.version) this.stale = undefined;
      this.stats.indexWrites += 1;
    } catch (error) {
      if (!renamed) await rm(temp, { force: true }).catch(() => undefined);
      throw new LibraryIndexError(`cannot write the index of ${this.dir}: ${errorCode(error)}`);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  private ensureWatcher(): boolean {
    if (this.watcher) return true;
    if (!this.watchEnabled || this.closed || Date.now() < this.watchRetryAt) return false;
    try {
      const watcher = watch(this.dir, { persistent: false }, (_event, name) => this.onEvent(name));
      const lost = () => {
        if (this.watcher !== watcher) return;
        this.dropWatcher();
        this.scheduleBackground();
      };
      // An error, or the folder itself removed (the watch then ends): the next check starts a new one.
      watcher.on("error", lost);
      watcher.on("close", lost);
      this.watcher = watcher;
      // Changes made while nothing watched are found by comparing every file once.
      this.needsScan = true;
      return true;
    } catch {
      this.watchRetryAt = Date.now() + this.verifyEveryMs;
      return false;
    }
  }

  private dropWatcher(): void {
    const watcher = this.watcher;
    this.watcher = undefined;
    watcher?.close();
  }

  private onEvent(name: string | null): void {
    if (this.closed) return;
    // No name, or the folder's own (it was moved or removed): compare everything at the next check.
    if (name === null || name === basename(this.dir)) this.needsScan = true;
    else if (isLibraryDocName(name)) this.dirty.add(name);
    else if (name !== INDEX_FILE) return;
    this.scheduleBackground();
  }

  /** A burst of events is handled once, shortly after it began; INDEX.md follows. */
  private scheduleBackground(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.serial(() => this.update(false)).catch(() => undefined);
    }, this.debounceMs);
    this.timer.unref();
  }

  /** Compares every file in the background once in a while: a lost event heals within verifyEveryMs. */
  private maybeVerify(): void {
    if (!this.watcher || this.verifying || Date.now() - this.lastVerify < this.verifyEveryMs) return;
    this.verifying = true;
    this.lastVerify = Date.now();
    void this.scan(undefined)
      .then(() => {
        if (this.dirty.size > 0) this.scheduleBackground();
      })
      .catch(() => undefined)
      .finally(() => {
        this.verifying = false;
      });
  }

  private slicer(): Slicer {
    return new Slicer(this.sliceMs, () => {
      this.stats.yields += 1;
    });
  }
}

/** Index order: the newer (greater) file name first. */
function newestFirst(left: string, right: string): number {
  return left < right ? 1 : left > right ? -1 : 0;
}

function sameList(left: string[], right: string[]): boolean {
  return left.length === right.length && left.every((name, index) => name === right[index]);
}

/** What tells a file version from another without reading it. */
function identOf(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function folderIdentity(stats: Stats): string {
  return `${stats.ino}:${stats.birthtimeMs}`;
}

function folderMark(stats: Stats): string {
  return `${stats.ino}:${stats.mtimeMs}`;
}

function folderMarkQuiet(path: string): string | undefined {
  const stats = lstatQuiet(path);
  return stats === undefined ? undefined : folderMark(stats);
}

function lstatQuiet(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

function readAll(fd: number, size: number): Buffer {
  let buffer = Buffer.allocUnsafe(Math.max(size, 4096));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      const larger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(larger);
      buffer = larger;
    }
    const read = readSync(fd, buffer, length, buffer.length - length, null);
    if (read === 0) return buffer.subarray(0, length);
    length += read;
  }
}

function readWhole(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    return readAll(fd, fstatSync(fd).size);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function sha1(data: Buffer): string {
  return createHash("sha1").update(data).digest("hex");
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
