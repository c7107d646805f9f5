/**
 * A tiny terminal for tests: feeds a pty transcript through the rules a real terminal
 * applies (wrap at the width, `\r`, `\n`, erase in line, cursor moves; CJK characters two
 * columns wide) and keeps every row ever written, so a test can ask what the person saw.
 * Rows are never scrolled away: a line left behind stays countable.
 */

// Written here rather than imported from src/: the test must not share the code's idea of width.
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

export type TerminalScreen = {
  /** Feeds output; `afterEach` runs after every character or control sequence. */
  write(output: string, afterEach?: () => void): void;
  /** The rows as text (a wide character's second column is not repeated). */
  rows(): string[];
};

export function terminalScreen(columns: number): TerminalScreen {
  const rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  // A character written in the last column leaves the cursor there; the next one wraps (xterm).
  let pendingWrap = false;
  const line = () => (rows[row] ??= []);
  const down = () => {
    row += 1;
    while (rows.length <= row) rows.push([]);
  };
  const put = (character: string) => {
    const width = WIDE.test(character) ? 2 : 1;
    if (pendingWrap || column + width > columns) {
      down();
      column = 0;
      pendingWrap = false;
    }
    const cells = line();
    while (cells.length < column) cells.push(" ");
    cells[column] = character;
    if (width === 2) cells[column + 1] = "";
    column += width;
    if (column >= columns) {
      column = columns - 1;
      pendingWrap = true;
    }
  };
  const eraseInLine = (mode: number) => {
    const cells = line();
    if (mode === 2) cells.length = 0;
    else if (mode === 0) cells.length = Math.min(cells.length, column);
    else for (let index = 0; index <= column && index < cells.length; index += 1) cells[index] = " ";
  };
  const csi = (parameters: string, final: string) => {
    const count = Number(parameters.replace(/^\?/, "").split(";")[0] || 0);
    pendingWrap = false;
    switch (final) {
      case "K":
        return eraseInLine(count);
      case "G":
        column = Math.min(columns - 1, Math.max(0, (count || 1) - 1));
        return;
      case "C":
        column = Math.min(columns - 1, column + (count || 1));
        return;
      case "D":
        column = Math.max(0, column - (count || 1));
        return;
      case "A":
        row = Math.max(0, row - (count || 1));
        return;
      case "B":
        for (let index = 0; index < (count || 1); index += 1) down();
        return;
      case "J":
        if (count === 0) {
          eraseInLine(0);
          rows.length = row + 1;
        }
        return;
      default:
        return; // modes, colours: nothing a row count depends on
    }
  };
  return {
    write(output, afterEach = () => undefined) {
      const characters = [...output];
      for (let index = 0; index < characters.length; index += 1) {
        const character = characters[index] as string;
        if (character === "\x1b") {
          const rest = characters.slice(index + 1, index + 40).join("");
          const sequence = /^\[([?0-9;]*)([@-~])/.exec(rest);
          if (sequence) {
            csi(sequence[1] ?? "", sequence[2] ?? "");
            index += sequence[0].length;
          } else index += 1;
        } else if (character === "\r") {
          column = 0;
          pendingWrap = false;
        } else if (character === "\n") {
          down();
          pendingWrap = false;
        } else if (character === "\b") {
          column = Math.max(0, column - 1);
          pendingWrap = false;
        } else if (character === "\x07" || character < " ") {
          // bell and other controls draw nothing
        } else put(character);
        afterEach();
      }
    },
    rows: () => rows.map((cells) => cells.join("").trimEnd()),
  };
}
