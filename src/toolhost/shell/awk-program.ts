/**
 * awk is an interpreter: `system("...")`, `print | "cmd"`, `"cmd" | getline` and gawk's
 * `|&` coprocesses run commands, and gawk's indirect calls (`f = "system"; @f("id")`)
 * call any function by a name held in a string. This scanner finds those forms in a
 * program text, skipping string and regex literals (where `|` is alternation, not a
 * pipe). Where a `/` could be either, it is read as division, so that nothing real is
 * taken for a regex and skipped.
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
    // A `/` starts a regex where an operand is expected (after an operator or at the start),
    // but not after `++` or `--`: `i++ / 2` divides.
    if (char === "/" && (previous === "" || /[(,~!{;&|=<>?:+\-*%^\n@]/.test(previous)) && !/(\+\+|--)\s*$/.test(code)) {
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
  // A backslash-newline continues the line: `system\` newline `("id")` is a call.
  code = code.replace(/\\\r?\n/g, " ");
  if (/\bsystem\s*\(/.test(code)) return "system() runs a command";
  if (code.replace(/\|\|/g, "").includes("|")) return "a | in the program pipes to or from a command";
  if (/@\s*(load|include)\b/.test(code)) return "@load and @include read code from elsewhere";
  // `@namespace "x"` only names; `@name(...)` calls whatever function the variable names.
  const indirect = /@\s*(?!namespace\b)[A-Za-z_]/.exec(code);
  if (indirect) return "an indirect call (@name(...)) calls a function named by a string, which can be system";
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
