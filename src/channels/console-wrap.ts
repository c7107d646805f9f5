/**
 * Words wrapped to the terminal's width as they arrive. A terminal wraps by itself, but
 * mid-word; here a word that no longer fits moves to the next row whole, a word wider
 * than a row is broken at the row's end, and a list item's next rows start under its
 * text. Widths are display columns (CJK characters take two, and each is a word of its
 * own: Chinese has no spaces; closing punctuation stays with the character before it).
 *
 * Rows are filled to one column less than the width, as the status line is: a character
 * in the last column leaves some terminals waiting to wrap.
 *
 * Text may come in pieces that split a word. A piece is printed at once; when the next
 * piece makes that word too long for its row, the word is erased from the row
 * (`ESC[nG ESC[K`: it is always on the cursor's row) and printed again on the next one.
 * Within one piece nothing is ever erased: the word is just not printed where it did not
 * fit. So a whole answer printed at once and the same answer printed piece by piece look
 * the same on the screen.
 */
import { codePointWidth, displayWidth } from "./display-width.js";

export type WrapWriter = {
  /** Prints more text: plain, `\n` ends a line. */
  append(text: string): void;
  /** Nothing is printed on the cursor's row yet (a line was just ended). */
  atRowStart(): boolean;
};

export type WrapOptions = {
  write(text: string): void;
  /** The terminal's width now. */
  columns(): number;
  /** Where the cursor stands on the first row (after a prefix such as `bot> `). */
  startColumn: number;
};

const TAB = "    ";
/** Punctuation that never starts a row, and punctuation that never ends one. */
const CLOSING = /[，。、；：！？）」』】〕〉》”’,.;:!?)\]}%…·ー〜～]/u;
const OPENING = /[（「『【〔〈《“‘([{]/u;
/** A list item's or a quote's marker: the item's further rows start under its text. */
const ITEM_MARKER = /^\s*(?:>\s*)*(?:(?:[-*+•]|\d{1,3}[.)])\s+)?/u;

type Word = {
  /** The column its first character is in, on the cursor's row. */
  column: number;
  text: string;
  width: number;
  /** Where it (and the spaces before it) start in the output not yet written; -1 once written. */
  cut: number;
};

export function createWrapWriter(options: WrapOptions): WrapWriter {
  let column = options.startColumn;
  /** The current line's text so far (for a list item's indent) and the columns before it on its first row. */
  let line = "";
  let lineOffset = options.startColumn;
  let indent: number | undefined;
  let spaces = 0;
  let word: Word | undefined;
  let previous = "";

  const limit = () => Math.max(1, options.columns() - 1);
  const hangingIndent = (rowLimit: number) => {
    if (indent === undefined) {
      const marker = displayWidth(ITEM_MARKER.exec(line)?.[0] ?? "");
      indent = marker > 0 ? Math.min(lineOffset + marker, Math.floor(rowLimit / 2)) : 0;
    }
    return indent;
  };

  /** Adds one visible character to the output `out`; returns the new output. */
  const put = (character: string, out: string): string => {
    const width = codePointWidth(character.codePointAt(0) ?? 0);
    const rowLimit = limit();
    // Wide characters are words of their own, unless punctuation binds them.
    if (word && (width === 2 || codePointWidth(previous.codePointAt(0) ?? 0) === 2)) {
      if (!CLOSING.test(character) && !OPENING.test(previous)) word = undefined;
    }
    previous = character;
    if (!word) {
      const cut = out.length;
      if (column + spaces + width <= rowLimit) {
        out += " ".repeat(spaces);
        column += spaces;
      } else if (column > hangingIndent(rowLimit)) {
        out += `\n${" ".repeat(hangingIndent(rowLimit))}`;
        column = hangingIndent(rowLimit);
      }
      spaces = 0;
      word = { column, text: "", width: 0, cut };
    }
    if (column + width > rowLimit) {
      // The indent is read once the line is long enough to wrap: by then its marker is complete.
      const room = hangingIndent(rowLimit);
      if (word.column > room && word.width + width <= rowLimit - room) {
        // The word moves to the next row whole.
        out = word.cut >= 0 ? out.slice(0, word.cut) : `${out}\x1b[${word.column + 1}G\x1b[K`;
        out += `\n${" ".repeat(room)}${word.text}`;
        column = room + word.width;
      } else {
        // Wider than a row: broken here.
        out += `\n${" ".repeat(room)}`;
        column = room;
      }
      word.column = room;
      word.cut = -1;
    }
    out += character;
    column += width;
    word.text += character;
    word.width += width;
    return out;
  };

  return {
    append(text) {
      let out = "";
      for (const character of text) {
        if (character === "\n") {
          out += "\n";
          column = 0;
          line = "";
          lineOffset = 0;
          indent = undefined;
          spaces = 0;
          word = undefined;
          previous = "";
          continue;
        }
        if (character === " " || character === "\t") {
          const blank = character === "\t" ? TAB : " ";
          spaces += blank.length;
          line += blank;
          word = undefined;
          previous = " ";
          continue;
        }
        // Control characters (escape sequences, `\r`) would move the cursor: never printed.
        if (codePointWidth(character.codePointAt(0) ?? 0) === 0 && /\p{Cc}/u.test(character)) continue;
        line += character;
        out = put(character, out);
      }
      if (word) word.cut = -1;
      if (out !== "") options.write(out);
    },
    atRowStart: () => column === 0,
  };
}
