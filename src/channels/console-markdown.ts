/**
 * Markdown shown plainly on a terminal: the console prints an answer as text, so the marks
 * that only make sense rendered go and what they mark stays. `**bold**`, `__bold__`,
 * `*emphasis*` and `` `code` `` lose their markers; `# ` heading marks go; a link is its
 * text and its address (`docs (https://…)`); a backslash escape is the character. Lists,
 * quotes, tables and code blocks stay as written (fence lines included: they say where
 * code starts and ends), and nothing inside a code block or a code span is touched.
 *
 * A streamed answer arrives unfinished. `partial` renders it so that what is printed now
 * is always the start of what the finished answer renders to: the last line (still being
 * written) stops before anything whose rendering is not yet known (an opened `**` or
 * backtick, a `[` that may become a link, a lone `#` that may become a heading mark).
 * Every earlier line is final: a construct never spans lines here.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]+|$)/;
/** A line that may still become a heading mark once more of it arrives. */
const HEADING_SO_FAR = /^ {0,3}#{1,6}$/;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const SPACE = /\s/u;
const PUNCTUATION = /[\p{P}\p{S}]/u;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/** A line rendered so far: `held` when the rest of an unfinished line must wait. */
type Rendered = { text: string; held: boolean };

/** `source` as plain text; `partial`: it is a prefix of an answer still being written. */
export function plainMarkdown(source: string, partial = false): string {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string;
    const unfinished = partial && index === lines.length - 1;
    const marker = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      // Inside a code block every line is kept; a fence as long as the opening one closes it.
      out.push(line);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
        fence = undefined;
      }
      continue;
    }
    if (marker && !(marker[0] === "`" && line.slice(line.indexOf(marker) + marker.length).includes("`"))) {
      out.push(line);
      fence = marker;
      continue;
    }
    const rendered = renderLine(line, unfinished);
    out.push(rendered.text);
    if (rendered.held) break;
  }
  return out.join("\n");
}

function renderLine(line: string, unfinished: boolean): Rendered {
  if (unfinished && HEADING_SO_FAR.test(line)) return { text: "", held: true };
  const heading = HEADING.exec(line);
  return inline(heading ? line.slice(heading[0].length) : line, unfinished);
}

/** Inline marks of one line; `unfinished`: stop where the rest could still change how this renders. */
function inline(line: string, unfinished: boolean): Rendered {
  let text = "";
  let index = 0;
  const hold = (): Rendered => ({ text, held: true });
  while (index < line.length) {
    const character = line[index] as string;
    if (character === "\\") {
      const next = line[index + 1];
      if (next === undefined && unfinished) return hold();
      const escaped = next !== undefined && ESCAPABLE.test(next);
      text += escaped ? next : character;
      index += escaped ? 2 : 1;
      continue;
    }
    const span =
      character === "`"
        ? codeSpan(line, index, unfinished)
        : character === "*" || character === "_"
          ? emphasis(line, index, unfinished)
          : character === "[" || (character === "!" && line[index + 1] === "[")
            ? link(line, index, unfinished)
            : undefined;
    if (span === "hold") return hold();
    if (span) {
      text += span.text;
      index = span.end;
      continue;
    }
    text += character;
    index += 1;
  }
  return { text, held: false };
}

/** A construct found at an index: its rendering and where the line goes on; "hold" when not yet known; undefined when it is no construct (the character is text). */
type Span = { text: string; end: number } | "hold" | undefined;

function codeSpan(line: string, start: number, unfinished: boolean): Span {
  const ticks = runAt(line, start, "`");
  // A run at the very end may still grow into a longer one.
  if (unfinished && start + ticks >= line.length) return "hold";
  let search = start + ticks;
  while (search < line.length) {
    const close = line.indexOf("`", search);
    if (close < 0) break;
    const length = runAt(line, close, "`");
    if (length === ticks) {
      if (unfinished && close + length >= line.length) return "hold";
      const code = line.slice(start + ticks, close);
      const padded = code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim() !== "";
      return { text: padded ? code.slice(1, -1) : code, end: close + length };
    }
    search = close + length;
  }
  if (unfinished) return "hold";
  return { text: "`".repeat(ticks), end: start + ticks };
}

function emphasis(line: string, start: number, unfinished: boolean): Span {
  const mark = line[start] as "*" | "_";
  const run = runAt(line, start, mark);
  // A run at the very end may still grow (`_` into `__`).
  if (unfinished && start + run >= line.length) return "hold";
  // `*`, `**` and `__` are marks; a lone `_` (snake_case, paths) and longer runs are text.
  const size = run === 2 ? 2 : run === 1 && mark === "*" ? 1 : 0;
  if (size === 0) return { text: mark.repeat(run), end: start + run };
  const before = line[start - 1];
  const after = line[start + size];
  const opens =
    after !== undefined &&
    !SPACE.test(after) &&
    (before === undefined || SPACE.test(before) || PUNCTUATION.test(before));
  if (!opens) return { text: mark.repeat(run), end: start + run };
  for (let close = line.indexOf(mark, start + size + 1); close >= 0; close = line.indexOf(mark, close + 1)) {
    if (runAt(line, close, mark) !== size || line[close - 1] === mark) continue;
    if (SPACE.test(line[close - 1] as string)) continue;
    const next = line[close + size];
    if (next === undefined && unfinished) return "hold";
    // `__` closes only before a word's end (never inside snake__case).
    if (mark === "_" && next !== undefined && WORD_CHARACTER.test(next)) continue;
    return { text: inline(line.slice(start + size, close), false).text, end: close + size };
  }
  if (unfinished) return "hold";
  return { text: mark.repeat(run), end: start + run };
}

/** `[text](address)` and `![alt](address)`: the text, then the address in brackets (just the address when they are the same). */
function link(line: string, start: number, unfinished: boolean): Span {
  const open = line[start] === "!" ? start + 1 : start;
  const close = line.indexOf("]", open + 1);
  if (close < 0 || close + 1 >= line.length) return unfinished ? "hold" : undefined;
  if (line[close + 1] !== "(") return undefined;
  const end = line.indexOf(")", close + 2);
  if (end < 0) return unfinished ? "hold" : undefined;
  const label = inline(line.slice(open + 1, close), false).text.trim();
  const address =
    line
      .slice(close + 2, end)
      .trim()
      .split(/\s+/)[0] ?? "";
  const text = label === "" || label === address ? address : address === "" ? label : `${label} (${address})`;
  return { text, end: end + 1 };
}

/** How many `mark` characters start at `index`. */
function runAt(line: string, index: number, mark: string): number {
  let end = index;
  while (line[end] === mark) end += 1;
  return end - index;
}
