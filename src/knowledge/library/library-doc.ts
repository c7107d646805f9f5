/**
 * One experience-library document: its file name (`YYYY-MM-DD-<slug>.md`) and the
 * optional frontmatter fields the index shows. Parsing is lenient by contract: a missing,
 * malformed or oversized frontmatter never fails anything; the entry falls back to the
 * file name.
 */
import { parseFrontmatter, textValue } from "../frontmatter.js";

/** `YYYY-MM-DD-<slug>.md`; the slug holds letters (CJK included), digits and hyphens. */
export const LIBRARY_DOC_NAME = /^\d{4}-\d{2}-\d{2}-[\p{L}\p{N}-]+\.md$/u;

/** The generated index's file name; never a document. */
export const INDEX_FILE = "INDEX.md";

/** Only the head of a document is read: frontmatter longer than this counts as missing. */
export const FRONTMATTER_MAX_BYTES = 8 * 1024;

export type LibraryEntry = {
  file: string;
  title: string;
  keywords: string[];
  summary: string;
  applicable: string;
  lastVerified: string;
};

export function isLibraryDocName(name: string): boolean {
  return LIBRARY_DOC_NAME.test(name);
}

/** Builds an entry from a document's head (the first FRONTMATTER_MAX_BYTES, or all of it). */
export function parseLibraryDoc(file: string, head: string): LibraryEntry {
  const parsed = parseFrontmatter(closedHead(head));
  const data = parsed.ok ? parsed.value.data : {};
  const field = (key: string) => oneLine(textValue(data[key]) ?? "");
  const keywordsValue = data.keywords;
  const keywords = (Array.isArray(keywordsValue) ? keywordsValue : (keywordsValue ?? "").split(/[,，、;；]/))
    .map((keyword) => oneLine(keyword).replaceAll(",", " "))
    .filter((keyword) => keyword.length > 0);
  return {
    file,
    title: field("title") || file.replace(/\.md$/, ""),
    keywords,
    summary: field("summary"),
    applicable: field("applicable"),
    lastVerified: field("last_verified"),
  };
}

/**
 * A head cut at FRONTMATTER_MAX_BYTES may end inside the body: keep only up to the closing
 * fence, so a truncated frontmatter reads as malformed (no fields) rather than half-read.
 */
function closedHead(head: string): string {
  const normalized = head.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) return "";
  const end = normalized.indexOf("\n---", 4);
  return end < 0 ? normalized : normalized.slice(0, end + 4);
}

/** One index line per document: no newlines, no `|` (the column separator), no runs of spaces. */
export function oneLine(value: string): string {
  return value.replace(/\|/g, "｜").replace(/\s+/g, " ").trim();
}
