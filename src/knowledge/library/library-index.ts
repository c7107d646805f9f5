/**
 * The generated `INDEX.md` of an experience library: one line per document, newest file
 * name first, deterministic for a given set of documents. Invariants:
 * - written to a temp file and renamed, so a reader (or a concurrent regeneration) sees
 *   the old index or a whole new one, never half of one;
 * - the index's mtime is the filesystem time at which its regeneration *started* (set
 *   back before the rename), so a document changed while it was being built is newer
 *   than the index and the next check regenerates again; a lost race heals, it never sticks;
 * - a document is a regular file named `YYYY-MM-DD-<slug>.md`; links, folders and other
 *   names are not documents.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  futimesSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import {
  FRONTMATTER_MAX_BYTES,
  INDEX_FILE,
  isLibraryDocName,
  parseLibraryDoc,
  type LibraryEntry,
} from "./library-doc.js";

export type LibraryLocale = "zh" | "en";

export const INDEX_HEADERS: Record<LibraryLocale, string> = {
  zh: "# 团队经验索引(系统自动生成,请勿手改;检索请 grep 本文件)",
  en: "# Team experience index (generated automatically, do not edit; grep this file to search)",
};
const VERIFIED_LABEL: Record<LibraryLocale, string> = { zh: "验证", en: "verified" };
/** Longest summary an index line carries; the document holds the rest. */
export const SUMMARY_MAX_CHARS = 160;
const TITLE_MAX_CHARS = 120;
const KEYWORDS_MAX_CHARS = 200;

export type IndexOptions = { locale: LibraryLocale };
export type IndexResult = {
  regenerated: boolean;
  count: number;
  /** Why it was regenerated: missing, document-newer, documents-changed, header-changed, rebuild. */
  reason?: string;
};

export class LibraryIndexError extends Error {
  override readonly name = "LibraryIndexError";
}

/** Document names of a library, newest first (the index's order). */
export function listLibraryDocs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && isLibraryDocName(entry.name))
    .map((entry) => entry.name)
    .sort((left, right) => (left < right ? 1 : left > right ? -1 : 0));
}

/** The index text for a set of entries (already in index order). */
export function renderIndex(entries: LibraryEntry[], options: IndexOptions): string {
  const lines = entries.map((entry) => renderIndexLine(entry, options.locale));
  return [indexHead(entries.length, options.locale), ...lines, ""].join("\n");
}

/** One document's index line. */
export function renderIndexLine(entry: LibraryEntry, locale: LibraryLocale): string {
  return [
    `- ${entry.file}`,
    clip(entry.title, TITLE_MAX_CHARS),
    clip(entry.keywords.join(","), KEYWORDS_MAX_CHARS) || "-",
    clip(entry.summary, SUMMARY_MAX_CHARS) || "-",
    `${VERIFIED_LABEL[locale]} ${entry.lastVerified || "-"}`,
  ].join(" | ");
}

/** The index's first two lines (header and count), without the newline after them. */
export function indexHead(count: number, locale: LibraryLocale): string {
  return `${INDEX_HEADERS[locale]}\n<!-- count: ${count} -->`;
}

/** The document name an index line starts with (`- <name> | ...`), or undefined for any other line. */
export function indexLineFile(line: string): string | undefined {
  if (!line.startsWith("- ")) return undefined;
  const end = line.indexOf(" | ");
  return end < 0 ? line.slice(2) : line.slice(2, end);
}

/** Regenerates INDEX.md when it is missing, older than a document, lists another set of documents, or has the other locale's header. */
export function ensureFresh(dir: string, options: IndexOptions): IndexResult {
  const docs = listLibraryDocs(dir);
  const reason = staleness(dir, docs, options);
  if (reason === undefined) return { regenerated: false, count: docs.length };
  return { ...regenerate(dir, options), reason };
}

/** Regenerates INDEX.md unconditionally. */
export function rebuildIndex(dir: string, options: IndexOptions): IndexResult {
  return { ...regenerate(dir, options), reason: "rebuild" };
}

/** The document names an index text lists, in its order. */
export function indexedFiles(indexText: string): string[] {
  return indexText.split("\n").flatMap((line) => {
    const file = indexLineFile(line);
    return file === undefined ? [] : [file];
  });
}

function staleness(dir: string, docs: string[], options: IndexOptions): string | undefined {
  const indexPath = join(dir, INDEX_FILE);
  let indexMtime: bigint;
  let text: string;
  try {
    indexMtime = statSync(indexPath, { bigint: true }).mtimeNs;
    text = readFileSync(indexPath, "utf8");
  } catch {
    return "missing";
  }
  if (!text.startsWith(`${INDEX_HEADERS[options.locale]}\n`)) return "header-changed";
  const listed = indexedFiles(text);
  if (listed.length !== docs.length || listed.some((file, index) => file !== docs[index])) return "documents-changed";
  for (const doc of docs) {
    let mtime: bigint;
    try {
      mtime = statSync(join(dir, doc), { bigint: true }).mtimeNs;
    } catch {
      return "documents-changed";
    }
    // `>=`: a document written in the same clock tick as the index may be newer than it.
    if (mtime >= indexMtime) return "document-newer";
  }
  return undefined;
}

function regenerate(dir: string, options: IndexOptions): { regenerated: true; count: number } {
  const indexPath = join(dir, INDEX_FILE);
  const temp = join(dir, `.${INDEX_FILE}.tmp-${process.pid}-${randomBytes(6).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    throw new LibraryIndexError(
      `cannot write the index of ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    // The temp file's birth time is the filesystem's "now" at the start (see the header).
    const started = fstatSync(fd).mtimeMs;
    const entries = listLibraryDocs(dir).flatMap((file) => {
      const head = readHead(join(dir, file));
      return head === undefined ? [] : [parseLibraryDoc(file, head)];
    });
    const buffer = Buffer.from(renderIndex(entries, options), "utf8");
    for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
    // One microsecond earlier: the float seconds futimes takes must never round past the start.
    futimesSync(fd, new Date(), (started - 0.001) / 1000);
    closeSync(fd);
    fd = -1;
    renameSync(temp, indexPath);
    return { regenerated: true, count: entries.length };
  } catch (error) {
    if (fd >= 0) closeSync(fd);
    rmSync(temp, { force: true });
    if (error instanceof LibraryIndexError) throw error;
    throw new LibraryIndexError(
      `cannot write the index of ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

let headBuffer: Buffer | undefined;

/** The first FRONTMATTER_MAX_BYTES of a document; undefined when it vanished or is no longer a file. */
export function readHead(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    // One buffer for every read: the text is decoded before the next read can reuse it.
    const buffer = (headBuffer ??= Buffer.allocUnsafeSlow(FRONTMATTER_MAX_BYTES));
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return buffer.toString("utf8", 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function clip(value: string, max: number): string {
  const characters = [...value];
  return characters.length <= max ? value : `${characters.slice(0, max - 1).join("")}…`;
}
