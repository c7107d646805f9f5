/**
 * The model says which lessons it applied. The lessons section asks for a plain last line,
 * `Lessons used: exp-3, exp-17` (`参考了 exp-3`), but models write it their own way: a bold
 * or italic label (`**Lessons used:** exp-3`), a parenthesis (`(Lessons used: exp-3)`,
 * `（参考了 exp-3）`), the citation after the last sentence of the answer, full-width
 * colons, several ids with any separators, a comment after the ids, or a list under the
 * label. Every labelled form is parsed here and removed before the user sees the answer or
 * anything stores it; the rest of its line stays.
 *
 * An id in brackets, backticks or a parenthesis with no label (`[exp-3]`, `` `exp-3` ``) is
 * a citation only when the distillation loop is on and it stands where citations stand:
 * on a line of its own or at the end of the answer's last line. Anywhere else it is the
 * user's own name for something (`Run `exp-1` reached 0.91`, a table cell, a link).
 *
 * Never touched: fenced code, and a bare `exp-3` in prose. An answer with no citation comes
 * back as written. The scanning is linear in the answer's length (citation-scan.ts).
 */
import { idNumber, idOnlyLine, labelledCutsOf, onlyTrailing, wrappedCuts, type Cut } from "./citation-scan.js";

export type Citations = { answer: string; cited: number[] };

/** Characters a line may hold once its citation is gone and still say nothing (markers, wrappers). */
const RESIDUE = new Set([..." \t\u00a0\u3000\u200b\u200c\u200d\u2060\ufeff>*_~-+•·.。:：,，;；()（）[]【】|`"]);
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

/** One line outside code: its labelled citations (a dangling label — ids on the next lines — apart). */
function stripLabelled(line: string, last: boolean): StrippedLine {
  const labelled = labelledCutsOf(line, last);
  const dangling = labelled.at(-1)?.dangling ? labelled.at(-1) : undefined;
  const complete = dangling ? labelled.slice(0, -1) : labelled;
  const changed = complete.length > 0;
  return {
    text: changed ? tidyEnd(cutAll(line, complete)) : line,
    ids: complete.flatMap((cut) => cut.ids),
    changed,
    ...(dangling ? { withoutDangling: tidyEnd(cutAll(line, labelled)) } : {}),
  };
}

const CODE_INDENT = /^(?: {4}|\t)/;
const GAP = new Set([..." \t\u00a0,，、;；/&+"]);
const AFTER_WORD = /[\p{L}\p{N}]$/u;

/**
 * A wrapped list that may be a citation: it is no link (`[exp-7](…)`, `[x](exp-7)`), and the
 * loop is on (the caller's check). Any id counts, shown or not: where citations stand,
 * `[exp-999]` is a phantom citation, and it must not reach the user either.
 */
function mayCite(line: string, cut: Cut): boolean {
  const open = line[cut.start];
  if (open === "[" && ["(", "[", ":"].includes(line[cut.end] ?? "")) return false;
  return !(open === "(" && line[cut.start - 1] === "]");
}

/** The wrapped lists ending the line, with only separators between them and punctuation after. */
function trailingRun(line: string, cuts: readonly Cut[]): Cut[] {
  const run: Cut[] = [];
  for (let index = cuts.length - 1; index >= 0; index -= 1) {
    const cut = cuts[index] as Cut;
    const next = run[0];
    const gap = next ? line.slice(cut.end, next.start).replace(/and|和/gi, "") : "";
    if (next ? ![...gap].every((char) => GAP.has(char)) : !onlyTrailing(line, cut.end)) break;
    run.unshift(cut);
  }
  const first = run[0];
  // Inline code straight after a word is an argument (`git checkout `exp-12``), not a citation.
  if (first && line[first.start] === "`" && AFTER_WORD.test(line.slice(0, first.start).trimEnd())) return [];
  return run;
}

/** The unlabelled citations of a line: wrapped ids on a line of their own or ending the answer. */
function wrappedCitations(line: string, last: boolean): Cut[] {
  if (line.includes("|") || CODE_INDENT.test(line)) return [];
  const cuts = wrappedCuts(line).filter((cut) => mayCite(line, cut));
  if (cuts.length === 0) return [];
  if (isResidue(cutAll(line, cuts))) return cuts;
  return last ? trailingRun(line, cuts) : [];
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

/** The ids listed on the lines from `from` on (blank lines before them allowed), and the line after them. */
function listUnder(lines: readonly string[], from: number): { ids: string[]; next: number } | undefined {
  let next = from;
  while (next < lines.length && (lines[next] as string).trim() === "") next += 1;
  const ids: string[] = [];
  const first = next;
  for (let listed = idOnlyLine(lines[next] ?? ""); listed; listed = idOnlyLine(lines[next] ?? "")) {
    ids.push(...listed);
    next += 1;
  }
  return next > first ? { ids, next } : undefined;
}

type Line = { text: string; code: boolean; changed: boolean; ids: string[] };

const isBlank = (line: string): boolean => line.trim() === "";

/** First pass: code marked, labelled citations cut (the answer's last line may carry a comment after its ids). */
function labelledPass(lines: readonly string[]): Line[] {
  const out: Line[] = [];
  let fence: Fence | undefined;
  let last = lines.length - 1;
  while (last > 0 && isBlank(lines[last] as string)) last -= 1;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const marker = fence ? undefined : fenceOf(line);
    if (fence || marker) {
      if (marker) fence = marker;
      else if (fence && closes(line, fence)) fence = undefined;
      out.push({ text: line, code: true, changed: false, ids: [] });
      continue;
    }
    const stripped = stripLabelled(line, index === last);
    const listed = stripped.withoutDangling === undefined ? undefined : listUnder(lines, index + 1);
    if (listed) index = listed.next - 1;
    out.push({
      text: listed ? (stripped.withoutDangling as string) : stripped.text,
      code: false,
      changed: stripped.changed || listed !== undefined,
      ids: [...stripped.ids, ...(listed?.ids ?? [])],
    });
  }
  return out;
}

/** Second pass: unlabelled wrapped ids that are citations (see wrappedCitations). */
function wrappedPass(lines: Line[]): void {
  let last = lines.length - 1;
  const gone = (line: Line): boolean => isBlank(line.text) || (line.changed && isResidue(line.text));
  while (last > 0 && gone(lines[last] as Line)) last -= 1;
  for (const [index, line] of lines.entries()) {
    if (line.code) continue;
    const cuts = wrappedCitations(line.text, index === last);
    if (cuts.length === 0) continue;
    line.text = tidyEnd(cutAll(line.text, cuts));
    line.changed = true;
    line.ids.push(...cuts.flatMap((cut) => cut.ids));
  }
}

/** The kept lines; a blank line next to another one where a line was removed goes too. */
function assemble(lines: readonly Line[]): string[] {
  const out: string[] = [];
  let squeeze = false;
  for (const line of lines) {
    if (line.changed && isResidue(line.text)) {
      squeeze = true;
      continue;
    }
    if (!line.code && isBlank(line.text) && squeeze && isBlank(out.at(-1) ?? "")) continue;
    if (line.code || !isBlank(line.text)) squeeze = false;
    out.push(line.text);
  }
  return out;
}

/** The kept lines joined; blank lines at either end are the ones the answer had there, none added by a removal. */
function joinKept(original: readonly string[], kept: readonly string[]): string {
  let start = 0;
  let end = kept.length;
  while (start < end && isBlank(kept[start] as string)) start += 1;
  while (end > start && isBlank(kept[end - 1] as string)) end -= 1;
  if (start === end) return "";
  let lead = 0;
  while (lead < original.length && isBlank(original[lead] as string)) lead += 1;
  let trail = original.length;
  while (trail > lead && isBlank(original[trail - 1] as string)) trail -= 1;
  return [...original.slice(0, lead), ...kept.slice(start, end), ...original.slice(trail)].join("\n");
}

/**
 * The answer without its citations, and the ids they cite. Labelled citations count any id
 * (the caller counts the phantoms); so do unlabelled wrapped ids where citations stand, but
 * only with the distillation loop on (`loopOn`): with it off, nobody asked the model to cite,
 * and `[exp-3]` ending an answer is the user's own name for something.
 */
export function extractCitations(answer: string, loopOn = false): Citations {
  const original = answer.split("\n");
  const lines = labelledPass(original);
  if (loopOn) wrappedPass(lines);
  if (!lines.some((line) => line.changed) && lines.length === original.length) return { answer, cited: [] };
  const cited = new Set<number>();
  for (const id of lines.flatMap((line) => line.ids)) {
    const parsed = idNumber(id);
    if (parsed !== undefined) cited.add(parsed);
  }
  return { answer: joinKept(original, assemble(lines)), cited: [...cited] };
}

/**
 * Text given to the distiller (its task ran with the loop on): the lessons section's lines
 * (`═══`, `[exp-…] …`) and every citation dropped.
 */
export function withoutLessonLines(text: string): string {
  const kept = text.split("\n").filter((line) => !/═══/.test(line) && !/^\s*\[exp-\d+\]\s+\S/i.test(line));
  return extractCitations(kept.join("\n"), true).answer;
}
