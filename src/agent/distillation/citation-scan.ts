/**
 * The pieces of a lesson citation inside one line, found by hand-written scanning so the
 * work stays linear in the line's length (no pattern here can backtrack over a long run):
 * a label (`Lessons used`, `参考了`…) with its decoration and colon, the list of ids after
 * it (each id possibly in brackets, backticks or emphasis; any separators), an id list in
 * brackets or backticks with no label, and the end of the line or of a parenthesis. A label
 * with ids on a line of its own (or on the answer's last line) takes the rest of that line
 * along (`Lessons used: exp-3 (the flag one)`, `… exp-3 ✅`, `… exp-3<br>`).
 */

/** A span of the line to remove and the ids it cites (digits as written). */
export type Cut = { start: number; end: number; ids: string[] };
export type LabelCut = Cut & { dangling: boolean };
/** Where a label sits: `lineStart` is where the line's markers (`- `, `> `, `**`) end; `last`, the answer's last line. */
export type LabelPlace = { lineStart: number; last: boolean };

const DECORATION = new Set(["*", "_", "~"]);
const OPENING = new Set(["(", "（", "[", "【"]);
const CLOSING_PAREN = new Set([")", "）", "]", "】"]);
const COLONS = new Set([":", "：", "-", "—", "–", "="]);
const TRUE_COLONS = new Set([":", "："]);
const MARKERS = new Set([..." \t>*_~-+•·#.)0123456789(（[【"]);
const ID_OPENERS = new Set(["[", "【", "`", "*", "_"]);
const ID_CLOSERS = new Set(["]", "】", "`", "*", "_"]);
/** What may follow a citation before the end of its line. */
const TRAILING = new Set([
  ".",
  "。",
  "!",
  "！",
  "?",
  "？",
  ";",
  "；",
  ",",
  "，",
  ")",
  "）",
  "]",
  "】",
  "`",
  "*",
  "_",
  "~",
]);
/** Where a sentence that states a citation begins: after one of these (ASCII ones followed by a space). */
const SENTENCE_ENDS = new Set(["。", "！", "？", "；", ".", "!", "?", ";"]);
/**
 * Labels, longest first within each family. Weak ones are also ordinary words: they count
 * only at a boundary, and all but `参考` only with a colon (`Lessons: exp-3`, `经验：exp-3`,
 * `References: exp-3`, never `References: RFC 9110`) and never with the ids on the next lines.
 */
const LABEL =
  /(?:lessons?|lesson\(s\))\s+(?:used|applied|referenced)|(?:used|applied)\s+lessons?|参考了?(?:的?经验)?|(?:使用|用到|引用|应用|用了|所用)[了的]?经验|lessons?|references?|经验/giu;
const WEAK = /^(?:lessons?|references?|经验|参考)$/i;
const ID = /exp-(\d+)/iy;
const SEPARATOR = /\s*(?:[,，、;；/&+]|and(?![\p{L}\p{N}])|和|及|与)?\s*/iuy;
const NONE = /(?:none|n\/a|nothing|无|没有|暂无|未使用)(?![\p{L}\p{N}])/iuy;
const WRAPPED_IDS = /[[(（【]\s*`?exp-\d+`?(?:\s*(?:[,，、;；/&+]|and|和)\s*`?exp-\d+`?)*\s*[\])）】]|`exp-\d+`/giu;

const SPACE = /\s/;
const WORD_CHAR = /[\p{L}\p{N}]/u;
const EMOJI_PART = /[\uD800-\uDFFF\uFE0F\u200D]|\p{Extended_Pictographic}/u;
const isSpace = (char: string | undefined): boolean => char !== undefined && SPACE.test(char);
const isWordChar = (char: string | undefined): boolean => char !== undefined && WORD_CHAR.test(char);
const isIn =
  (set: Set<string>) =>
  (char: string | undefined): boolean =>
    char !== undefined && set.has(char);
const isDecorationOrSpace = (char: string | undefined): boolean => isSpace(char) || isIn(DECORATION)(char);
/** Before a label: decoration, spaces and emoji (`📚 Lessons used`), surrogate halves included. */
const isPrefix = (char: string | undefined): boolean =>
  isDecorationOrSpace(char) || (char !== undefined && EMOJI_PART.test(char));

function skipForward(line: string, from: number, test: (char: string | undefined) => boolean): number {
  let index = from;
  while (index < line.length && test(line[index])) index += 1;
  return index;
}

function skipBack(line: string, from: number, test: (char: string | undefined) => boolean): number {
  let index = from;
  while (index > 0 && test(line[index - 1])) index -= 1;
  return index;
}

/** Ids from `from` on, each optionally wrapped, with any separators between; the list's end (after its last id). */
export function readIds(line: string, from: number): { ids: string[]; end: number } | undefined {
  const ids: string[] = [];
  let end = from;
  let position = from;
  const id = new RegExp(ID.source, ID.flags);
  const separator = new RegExp(SEPARATOR.source, SEPARATOR.flags);
  for (;;) {
    id.lastIndex = skipForward(line, position, isIn(ID_OPENERS));
    const match = id.exec(line);
    if (!match || isWordChar(line[id.lastIndex]) || line[id.lastIndex] === "-") break;
    ids.push(match[1] as string);
    end = skipForward(line, id.lastIndex, isIn(ID_CLOSERS));
    separator.lastIndex = end;
    separator.exec(line);
    position = separator.lastIndex;
  }
  return ids.length > 0 ? { ids, end } : undefined;
}

function readNone(line: string, from: number): { ids: string[]; end: number } | undefined {
  const none = new RegExp(NONE.source, NONE.flags);
  none.lastIndex = from;
  return none.exec(line) ? { ids: [], end: none.lastIndex } : undefined;
}

/** Only trailing punctuation, wrappers and spaces from `from` to the end of the line. */
export function onlyTrailing(line: string, from: number): boolean {
  return skipForward(line, from, (char) => isSpace(char) || isIn(TRAILING)(char)) === line.length;
}

/** The start of the sentence holding `index` (after the previous sentence end), spaces skipped. */
function sentenceStart(line: string, index: number): number {
  let start = index;
  while (start > 0) {
    const char = line[start - 1] as string;
    if (SENTENCE_ENDS.has(char) && (char.charCodeAt(0) > 0x7f || isSpace(line[start]))) break;
    start -= 1;
  }
  return skipForward(line, start, isSpace);
}

/** The citation whose label spans [labelStart, labelEnd), or undefined when what follows is not one. */
function citationAt(line: string, labelStart: number, labelEnd: number, place: LabelPlace): LabelCut | undefined {
  const label = line.slice(labelStart, labelEnd);
  if (/[a-z]$/i.test(label) && isWordChar(line[labelEnd])) return undefined;
  const weak = WEAK.test(label);
  const before = skipBack(line, labelStart, isPrefix);
  const paren = isIn(OPENING)(line[before - 1]) ? before - 1 : -1;
  let start = paren >= 0 ? skipBack(line, paren, isIn(DECORATION)) : skipForward(line, before, isSpace);
  const bounded = paren >= 0 || before === 0 || !isWordChar(line[before - 1]);
  if (weak && !bounded) return undefined;
  let position = skipForward(line, labelEnd, isDecorationOrSpace);
  const colon = isIn(TRUE_COLONS)(line[position]);
  if (weak && label !== "参考" && !colon) return undefined;
  if (isIn(COLONS)(line[position])) position = skipForward(line, position + 1, isDecorationOrSpace);
  if (position === line.length)
    return bounded && paren < 0 && !weak ? { start, end: line.length, ids: [], dangling: true } : undefined;
  const list = readIds(line, position) ?? readNone(line, position);
  if (!list) return undefined;
  if (paren >= 0) {
    const close = skipForward(line, list.end, (char) => isDecorationOrSpace(char) || char === "." || char === "。");
    if (isIn(CLOSING_PAREN)(line[close]))
      return { start, end: skipForward(line, close + 1, isIn(DECORATION)), ids: list.ids, dangling: false };
  }
  if (!onlyTrailing(line, list.end)) {
    // Something after the ids: a comment on the citation when the label stands on its own
    // line or ends the answer and is plainly one (a colon, or no word straight after the ids).
    const own = start <= place.lineStart || place.last;
    const after = line[skipForward(line, list.end, isSpace)];
    if (list.ids.length === 0 || !own || !(colon || !isWordChar(after))) return undefined;
  }
  if (!bounded) start = sentenceStart(line, start);
  return { start, end: line.length, ids: list.ids, dangling: false };
}

/** The labelled citations of a line, left to right (a dangling label — nothing after it — comes last). */
export function labelledCuts(line: string, last = false): LabelCut[] {
  const cuts: LabelCut[] = [];
  const place = { lineStart: skipForward(line, 0, isIn(MARKERS)), last };
  const label = new RegExp(LABEL.source, LABEL.flags);
  for (let match = label.exec(line); match; match = label.exec(line)) {
    const cut = citationAt(line, match.index, match.index + match[0].length, place);
    if (!cut) continue;
    cuts.push(cut);
    if (cut.end >= line.length) break;
    label.lastIndex = cut.end;
  }
  return cuts;
}

/** Id lists in brackets, parentheses or backticks with no label: `[exp-3]`, `(exp-3, exp-7)`, `` `exp-3` ``. */
export function wrappedCuts(line: string): Cut[] {
  const cuts: Cut[] = [];
  const wrapped = new RegExp(WRAPPED_IDS.source, WRAPPED_IDS.flags);
  for (let match = wrapped.exec(line); match; match = wrapped.exec(line))
    cuts.push({
      start: match.index,
      end: match.index + match[0].length,
      ids: [...match[0].matchAll(/exp-(\d+)/gi)].map((found) => found[1] as string),
    });
  return cuts;
}

const INVISIBLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/;

/**
 * The labelled citations of a line that may hold zero-width characters (`Lessons\u200b used`):
 * read on the line without them, the spans mapped back onto the line as written.
 */
export function labelledCutsOf(line: string, last: boolean): LabelCut[] {
  if (!INVISIBLE.test(line)) return labelledCuts(line, last);
  const positions: number[] = [];
  let visible = "";
  for (let index = 0; index < line.length; index += 1)
    if (!INVISIBLE.test(line[index] as string)) {
      positions.push(index);
      visible += line[index];
    }
  positions.push(line.length);
  const at = (index: number): number => positions[index] as number;
  // A span takes the invisible characters around it along.
  return labelledCuts(visible, last).map((cut) => ({
    ...cut,
    start: cut.start === 0 ? 0 : at(cut.start - 1) + 1,
    end: cut.end >= visible.length ? line.length : at(cut.end),
  }));
}

/** An id's number (leading zeros of any count dropped), or undefined when it is too long to be one. */
export function idNumber(digits: string): number | undefined {
  const significant = digits.replace(/^0+(?=\d)/, "");
  return significant.length <= 15 ? Number(significant) : undefined;
}

/** A line holding only a list marker and ids (the list under a `Lessons used:` label), or undefined. */
export function idOnlyLine(line: string): string[] | undefined {
  let position = skipForward(line, 0, (char) => isSpace(char) || char === ">");
  if (["-", "*", "+", "•"].includes(line[position] ?? "")) position += 1;
  else
    position = skipForward(
      line,
      skipForward(line, position, (char) => /\d/.test(char ?? "")),
      (char) => char === "." || char === ")",
    );
  const list = readIds(line, skipForward(line, position, isSpace));
  return list && onlyTrailing(line, list.end) ? list.ids : undefined;
}
