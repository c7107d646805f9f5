/**
 * The model says which lessons it applied. The lessons section asks for a plain last line,
 * `Lessons used: exp-3, exp-17` (`参考了 exp-3`), but models write it their own way: a bold
 * or italic label (`**Lessons used:** exp-3`), brackets or backticks (`[exp-3]`,
 * `` `exp-3` ``), a parenthesis (`(Lessons used: exp-3)`, `（参考了 exp-3）`), the citation
 * after the last sentence of the answer, full-width colons, several ids with any
 * separators, or a list under the label. Every such form is parsed here and removed before
 * the user sees the answer or anything stores it; the rest of its line stays.
 *
 * Never touched: text inside fenced code blocks, and a bare `exp-3` in prose with no label
 * and no bracket or backtick around it (it may be the user's own name for something, such
 * as an experiment run; it is neither counted nor removed). The scanning is linear in the
 * answer's length (citation-scan.ts).
 */
import { idNumber, idOnlyLine, labelledCuts, wrappedCuts, type Cut } from "./citation-scan.js";

export type Citations = { answer: string; cited: number[] };

/** Characters a line may hold once its citation is gone and still say nothing (markers, wrappers). */
const RESIDUE = new Set([..." \t>*_~-+•·.。:：,，;；()（）[]【】|`"]);
const ORDERED_MARKER = /^[\s>]*\d{1,9}[.)]/;
/** Left at the end of a line whose trailing citation was removed ("Done — Lessons used: …"). */
const DANGLING_END = new Set([..." \t,，;；、—–"]);
const FENCE = /^ {0,3}(?:>\s?)*(`{3,}|~{3,})/;
/** After a cut, the spaces before it go when it was followed by the end, a space or punctuation. */
const TIGHT_AFTER = /[\s.,;:!?。，；：！？)）\]】]/u;

/** Removes the spans (sorted, not overlapping) from the line, tidying the spaces around each. */
function cutAll(line: string, cuts: readonly Cut[]): string {
  let out = "";
  let from = 0;
  let content = false;
  for (const cut of cuts) {
    let kept = line.slice(from, cut.start);
    const next = line[cut.end];
    if (next === undefined || TIGHT_AFTER.test(next)) kept = kept.trimEnd();
    out += kept;
    content ||= /\S/.test(kept);
    from = cut.end;
    // A citation at the start of the line takes the space after it along.
    if (!content) while (line[from] === " ") from += 1;
  }
  return out + line.slice(from);
}

function tidyEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (DANGLING_END.has(line[end - 1] as string) || (line[end - 1] === "-" && line[end - 2] === " ")))
    end -= 1;
  return line.slice(0, end);
}

const isResidue = (line: string): boolean => [...line.replace(ORDERED_MARKER, "")].every((char) => RESIDUE.has(char));

type StrippedLine = { text: string; ids: string[]; changed: boolean; withoutDangling?: string };

/** One line outside code: labelled citations, then bracketed or backticked ids. */
function stripLine(line: string): StrippedLine {
  const labelled = labelledCuts(line);
  const dangling = labelled.at(-1)?.dangling ? labelled.at(-1) : undefined;
  const complete = dangling ? labelled.slice(0, -1) : labelled;
  const finish = (cuts: readonly Cut[]): { text: string; ids: string[] } => {
    const first = cutAll(line, cuts);
    const wrapped = wrappedCuts(first);
    return {
      text: cutAll(first, wrapped),
      ids: [...cuts.flatMap((cut) => cut.ids), ...wrapped.flatMap((cut) => cut.ids)],
    };
  };
  const { text, ids } = finish(complete);
  const changed = complete.length > 0 || text !== line;
  return {
    text: changed ? tidyEnd(text) : line,
    ids,
    changed,
    ...(dangling ? { withoutDangling: tidyEnd(finish(labelled).text) } : {}),
  };
}

type Fence = { char: string; length: number };

function fenceOf(line: string): Fence | undefined {
  const marker = FENCE.exec(line)?.[1];
  return marker ? { char: marker[0] as string, length: marker.length } : undefined;
}

/** A closing fence: only the opening fence's character, at least as many (after any quote markers). */
function closes(line: string, fence: Fence): boolean {
  const bare = line.replace(/^[\s>]*/, "").trimEnd();
  return bare.length >= fence.length && [...bare].every((char) => char === fence.char);
}

/** The answer without its citations (in any of the forms above), and the ids they cite, shown or not. */
export function extractCitations(answer: string): Citations {
  const lines = answer.split("\n");
  const out: string[] = [];
  const cited = new Set<number>();
  let changed = false;
  let fence: Fence | undefined;
  // After a removed line, a blank line next to another blank one goes too.
  let squeeze = false;
  const keep = (line: string): void => {
    if (line.trim() === "" && squeeze && (out.at(-1) ?? "").trim() === "") return;
    if (line.trim() !== "") squeeze = false;
    out.push(line);
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const marker = fence ? undefined : fenceOf(line);
    if (fence || marker) {
      if (marker) fence = marker;
      else if (fence && closes(line, fence)) fence = undefined;
      out.push(line);
      squeeze = false;
      continue;
    }
    const stripped = stripLine(line);
    let text = stripped.text;
    const ids = [...stripped.ids];
    if (stripped.withoutDangling !== undefined) {
      // `Lessons used:` with the ids listed on the lines under it.
      let next = index + 1;
      for (let listed = idOnlyLine(lines[next] ?? ""); listed; listed = idOnlyLine(lines[next] ?? "")) {
        ids.push(...listed);
        next += 1;
      }
      if (next > index + 1) {
        text = stripped.withoutDangling;
        index = next - 1;
        changed = true;
      }
    }
    for (const id of ids) {
      const parsed = idNumber(id);
      if (parsed !== undefined) cited.add(parsed);
    }
    if (!stripped.changed && text === line) {
      keep(line);
      continue;
    }
    changed = true;
    if (isResidue(text)) squeeze = true;
    else keep(text);
  }
  if (!changed) return { answer, cited: [] };
  return { answer: out.join("\n").trim(), cited: [...cited] };
}

/** Text given to the distiller: the lessons section's lines (`═══`, `[exp-…] …`) and every citation dropped. */
export function withoutLessonLines(text: string): string {
  const kept = text.split("\n").filter((line) => !/═══/.test(line) && !/^\s*\[exp-\d+\]\s+\S/i.test(line));
  return extractCitations(kept.join("\n")).answer;
}
