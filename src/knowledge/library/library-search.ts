/**
 * Ranked search over an INDEX.md text: each query term (words, plus character bigrams of
 * Chinese runs, so `死锁` matches `死锁排查`) is looked up as a substring of the title,
 * keywords, file name and summary, weighted in that order; the whole query found as a
 * phrase adds a bonus. Ties go to the newer document. It reads only the index it is given.
 */
import { terms } from "../keywords.js";

export type LibraryHit = { file: string; line: string; score: number };

const WEIGHTS = { title: 3, keywords: 3, file: 2, summary: 1 } as const;
const PHRASE_BONUS = 4;

type IndexedLine = { line: string; file: string; fields: Record<keyof typeof WEIGHTS, string> };

export function parseIndexLines(indexText: string): IndexedLine[] {
  return indexText.split("\n").flatMap((line) => {
    if (!line.startsWith("- ")) return [];
    const [file = "", title = "", keywords = "", summary = ""] = line.slice(2).split(" | ");
    return [
      {
        line,
        file,
        fields: {
          title: title.toLowerCase(),
          keywords: keywords.toLowerCase(),
          file: file.toLowerCase(),
          summary: summary.toLowerCase(),
        },
      },
    ];
  });
}

export function searchIndex(indexText: string, query: string, limit: number): LibraryHit[] {
  return searchLines(parseIndexLines(indexText), query, limit);
}

/**
 * A searcher that parses an index once per version: `key` names the version (the child
 * uses INDEX.md's mtime and size), so repeated searches skip the split and lowercasing.
 */
export function createIndexSearcher(): (
  key: string,
  readText: () => string,
  query: string,
  limit: number,
) => LibraryHit[] {
  let cached: { key: string; lines: IndexedLine[] } | undefined;
  return (key, readText, query, limit) => {
    if (cached?.key !== key) cached = { key, lines: parseIndexLines(readText()) };
    return searchLines(cached.lines, query, limit);
  };
}

function searchLines(lines: IndexedLine[], query: string, limit: number): LibraryHit[] {
  const phrase = query.trim().toLowerCase();
  const queryTerms = [...terms(query)];
  // A query of stop words only still searches for what was typed.
  if (queryTerms.length === 0) queryTerms.push(...phrase.split(/\s+/).filter((word) => word.length > 0));
  const hits: LibraryHit[] = [];
  for (const entry of lines) {
    let score = 0;
    for (const term of queryTerms) {
      for (const field of Object.keys(WEIGHTS) as (keyof typeof WEIGHTS)[])
        if (entry.fields[field].includes(term)) score += WEIGHTS[field];
    }
    if (phrase.length > 0 && Object.values(entry.fields).some((value) => value.includes(phrase))) score += PHRASE_BONUS;
    if (score > 0) hits.push({ file: entry.file, line: entry.line, score });
  }
  return hits
    .sort((left, right) => right.score - left.score || (left.file < right.file ? 1 : left.file > right.file ? -1 : 0))
    .slice(0, limit);
}
