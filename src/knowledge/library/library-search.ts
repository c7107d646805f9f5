/**
 * Ranked search over experience-library index lines: each query term (words, plus
 * character bigrams of Chinese runs, so `死锁` matches `死锁排查`) is looked up as a
 * substring of the title, keywords, file name and summary, weighted in that order; the
 * whole query found as a phrase adds a bonus. Ties go to the newer document (the greater
 * file name). The ranking is defined here once; `TermIndex` (library-term-index.ts)
 * finds the same hits through a bigram index instead of a scan of every line.
 */
import { terms } from "../keywords.js";

export type LibraryHit = { file: string; line: string; score: number };

/** The searched fields, in the order the weights and the phrase check take them. */
export const FIELD_NAMES = ["title", "keywords", "file", "summary"] as const;
export const FIELD_WEIGHTS: readonly number[] = [3, 3, 2, 1];
export const PHRASE_BONUS = 4;

type FieldName = (typeof FIELD_NAMES)[number];
type IndexedLine = { line: string; file: string; fields: Record<FieldName, string> };

/** An index line's file name and its searched fields, lowercased, in FIELD_NAMES order. */
export function indexLineFields(line: string): { file: string; fields: string[] } {
  const [file = "", title = "", keywords = "", summary = ""] = line.slice(2).split(" | ");
  return {
    file,
    fields: [title.toLowerCase(), keywords.toLowerCase(), file.toLowerCase(), summary.toLowerCase()],
  };
}

export function parseIndexLines(indexText: string): IndexedLine[] {
  return indexText.split("\n").flatMap((line) => {
    if (!line.startsWith("- ")) return [];
    const { file, fields } = indexLineFields(line);
    const [title = "", keywords = "", fileField = "", summary = ""] = fields;
    return [{ line, file, fields: { title, keywords, file: fileField, summary } }];
  });
}

/**
 * What a query looks for: its terms (a query of stop words only still searches for what
 * was typed, word by word; repeated words then count again) and the whole query as a phrase.
 */
export function queryTerms(query: string): { phrase: string; terms: string[] } {
  const phrase = query.trim().toLowerCase();
  const found = [...terms(query)];
  if (found.length === 0) found.push(...phrase.split(/\s+/).filter((word) => word.length > 0));
  return { phrase, terms: found };
}

/** Whether hit `a` ranks before hit `b`: a higher score, then the newer (greater) file name. */
export function ranksBefore(scoreA: number, fileA: string, scoreB: number, fileB: string): boolean {
  return scoreA > scoreB || (scoreA === scoreB && fileA > fileB);
}
