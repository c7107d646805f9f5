/**
 * awk is an interpreter: `system("...")`, `print | "cmd"`, `"cmd" | getline` and gawk's
 * `|&` coprocesses run commands. This scanner finds those forms in a program text,
 * skipping string and regex literals (where `|` is alternation, not a pipe).
 */
export function awkProgramProblem(program: string): string | undefined {
  let code = "";
  let previous = "";
  for (let index = 0; index < program.length; index += 1) {
    const char = program[index] as string;
    if (char === '"') {
      index = skipLiteral(program, index, '"');
      code += ' "" ';
      previous = '"';
      continue;
    }
    // A `/` starts a regex where an operand is expected (after an operator or at the start).
    if (char === "/" && (previous === "" || /[(,~!{;&|=<>?:+\-*%^\n]/.test(previous))) {
      index = skipLiteral(program, index, "/");
      code += " // ";
      previous = "/";
      continue;
    }
    if (char === "#") {
      const newline = program.indexOf("\n", index);
      index = newline < 0 ? program.length : newline - 1;
      continue;
    }
    code += char;
    if (!/\s/.test(char)) previous = char;
  }
  if (/\bsystem\s*\(/.test(code)) return "system() runs a command";
  if (code.replace(/\|\|/g, "").includes("|")) return "a | in the program pipes to or from a command";
  if (/@(load|include)\b/.test(code)) return "@load and @include read code from elsewhere";
  return undefined;
}

/** Index of the closing quote of a literal opened at `start` (backslash escapes honoured). */
function skipLiteral(text: string, start: number, quote: string): number {
  let index = start + 1;
  for (; index < text.length && text[index] !== quote; index += 1) {
    if (text[index] === "\\") index += 1;
    else if (quote === "/" && text[index] === "[") {
      // A bracket expression may hold the delimiter: /[/]/.
      const close = text.indexOf("]", index + 2);
      if (close > 0) index = close;
    }
  }
  return index;
}
