/**
 * How many terminal columns a text takes, and cutting a text to a number of columns. A
 * terminal draws CJK characters and full-width forms two columns wide, so a status line
 * sized by `string.length` still wraps, and a wrapped line cannot be redrawn in place.
 */

/** East Asian Wide and Fullwidth ranges (Unicode 15), and the emoji blocks terminals draw wide. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** Marks drawn on the character before them, and invisible format characters. */
const ZERO_WIDTH: readonly (readonly [number, number])[] = [
  [0x0300, 0x036f],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
];

const within = (ranges: readonly (readonly [number, number])[], codePoint: number) =>
  ranges.some(([low, high]) => codePoint >= low && codePoint <= high);

/** Columns one code point takes: 0, 1 or 2. Control characters take none (callers replace them first). */
export function codePointWidth(codePoint: number): 0 | 1 | 2 {
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) return 0;
  if (within(ZERO_WIDTH, codePoint)) return 0;
  return within(WIDE, codePoint) ? 2 : 1;
}

export function displayWidth(value: string): number {
  let width = 0;
  for (const character of value) width += codePointWidth(character.codePointAt(0) ?? 0);
  return width;
}

/** `value` cut to at most `columns` columns, ending in `…` when something was cut. */
export function fitWidth(value: string, columns: number): string {
  if (displayWidth(value) <= columns) return value;
  if (columns < 1) return "";
  let kept = "";
  let width = 0;
  for (const character of value) {
    const next = codePointWidth(character.codePointAt(0) ?? 0);
    // Room is left for the ellipsis (one column).
    if (width + next > columns - 1) break;
    kept += character;
    width += next;
  }
  return `${kept}…`;
}
