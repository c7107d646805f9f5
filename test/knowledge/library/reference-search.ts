/**
 * The library search as it was before the term index (issue 29, item 6), kept verbatim as
 * the reference the new search is compared with: a linear scan over INDEX.md's lines,
 * each query term looked up as a substring of title, keywords, file name and summary.
 */
import { terms } from "../../../src/knowledge/keywords.js";

export type ReferenceHit = { file: string; line: string; score: number };

const WEIGHTS = { title: 3, keywords: 3, file: 2, summary: 1 } as const;
const PHRASE_BONUS = 4;

type IndexedLine = { line: string; file: string; fields: Record<keyof typeof WEIGHTS, string> };

function parseIndexLines(indexText: string): IndexedLine[] {
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

export function referenceSearch(indexText: string, query: string, limit: number): ReferenceHit[] {
  return searchLines(parseIndexLines(indexText), query, limit);
}

function searchLines(lines: IndexedLine[], query: string, limit: number): ReferenceHit[] {
  const phrase = query.trim().toLowerCase();
  const queryTerms = [...terms(query)];
  // A query of stop words only still searches for what was typed.
  if (queryTerms.length === 0) queryTerms.push(...phrase.split(/\s+/).filter((word) => word.length > 0));
  const hits: ReferenceHit[] = [];
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
