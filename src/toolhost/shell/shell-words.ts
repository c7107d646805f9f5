/**
 * Splits a command line into words, operators and redirections the way bash does where
 * it matters for checking it: quotes (single, double, `$'...'`), backslashes, comments
 * (a `#` at the start of a word runs to the end of its LINE, not of the command), and the
 * list and pipeline operators. What cannot be checked without running it is refused:
 * command and process substitution, arithmetic (`$((`, `$[`), parameter expansion
 * operators (`${a[...]}`, `${x:-...}`), subshells and groups.
 *
 * A word whose value is only known when bash runs it (a `$` expansion, an unquoted
 * wildcard or brace list) is marked `dynamic`: it could turn into an option such as
 * `-v` (`$_` is the previous command's last argument; a file may be named `-e1e id`).
 */
export type Word = { kind: "word"; text: string; raw: string; dynamic: boolean };
export type Operator = { kind: "operator"; text: string };
export type Redirect = { kind: "redirect"; text: string };
export type ShellToken = Word | Operator | Redirect;

export type LexResult = { tokens: ShellToken[] } | { error: string };

const SEPARATORS = new Set([";", "\n", "|", "&"]);

export function lexShell(line: string): LexResult {
  const tokens: ShellToken[] = [];
  let text = "";
  let raw = "";
  let dynamic = false;
  let inWord = false;
  const push = () => {
    if (inWord) tokens.push({ kind: "word", text, raw, dynamic });
    text = "";
    raw = "";
    dynamic = false;
    inWord = false;
  };
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index] as string;
    const next = line[index + 1];
    if (char === "\\") {
      if (next === undefined) return { error: "the command ends with a backslash" };
      if (next !== "\n") {
        text += next;
        raw += char + next;
        inWord = true;
      }
      index += 1;
    } else if (char === "'") {
      const end = line.indexOf("'", index + 1);
      if (end < 0) return { error: "unterminated single quote" };
      text += line.slice(index + 1, end);
      raw += line.slice(index, end + 1);
      inWord = true;
      index = end;
    } else if (char === "$" && next === "'") {
      // ANSI-C quoting: a backslash escapes the quote. Its value is decoded by bash: dynamic.
      let end = index + 2;
      for (; end < line.length && line[end] !== "'"; end += 1) if (line[end] === "\\") end += 1;
      if (end >= line.length) return { error: "unterminated $'...' quote" };
      text += line.slice(index + 2, end);
      raw += line.slice(index, end + 1);
      dynamic = true;
      inWord = true;
      index = end;
    } else if (char === '"' || (char === "$" && next === '"')) {
      const start = char === "$" ? index + 1 : index;
      let end = start + 1;
      for (; end < line.length && line[end] !== '"'; end += 1) {
        if (line[end] === "\\") end += 1;
        else if (line[end] === "`") return { error: "command substitution cannot be checked" };
        else if (line[end] === "$") {
          const expansion = checkExpansion(line, end);
          if (expansion) return { error: expansion };
          dynamic = true;
        }
      }
      if (end >= line.length) return { error: "unterminated double quote" };
      text += line.slice(start + 1, end).replace(/\\(["\\$`])/g, "$1");
      raw += line.slice(index, end + 1);
      inWord = true;
      index = end;
    } else if (char === "`") {
      return { error: "command substitution cannot be checked" };
    } else if (char === "$") {
      const expansion = checkExpansion(line, index);
      if (expansion) return { error: expansion };
      text += char;
      raw += char;
      dynamic = true;
      inWord = true;
    } else if ((char === "<" || char === ">") && next === "(") {
      return { error: "process substitution cannot be checked" };
    } else if (
      char === "(" ||
      char === ")" ||
      (char === "{" && !inWord && /[\s;]/.test(next ?? " ")) ||
      (char === "}" && !inWord)
    ) {
      return { error: "subshells and command groups cannot be checked" };
    } else if (char === "<" || char === ">" || (char === "&" && next === ">")) {
      const redirect = readRedirect(line, index, /^\d$/.test(raw) ? raw : "");
      if ("error" in redirect) return redirect;
      if (/^\d$/.test(raw)) {
        text = "";
        raw = "";
        inWord = false;
      } else push();
      tokens.push({ kind: "redirect", text: redirect.text });
      index = redirect.end - 1;
    } else if (SEPARATORS.has(char)) {
      push();
      let operator = char;
      if (
        (char === "|" || char === "&" || char === ";") &&
        (next === char || (char === "|" && next === "&") || (char === ";" && next === "&"))
      ) {
        operator += next;
        index += 1;
      }
      tokens.push({ kind: "operator", text: operator });
    } else if (/\s/.test(char)) {
      push();
    } else if (char === "#" && !inWord) {
      // A comment ends at the end of its line: what follows the newline still runs.
      const newline = line.indexOf("\n", index);
      if (newline < 0) break;
      index = newline - 1;
    } else {
      const rest = line.slice(index + 1);
      // A wildcard, a bracket with its closing `]` in the same word, a brace list or range.
      if (
        char === "*" ||
        char === "?" ||
        (char === "[" && /^[^\s;&|<>]*\]/.test(rest)) ||
        (char === "{" && /^[^}]*(,|\.\.)[^}]*\}/.test(rest))
      )
        dynamic = true;
      text += char;
      raw += char;
      inWord = true;
    }
  }
  push();
  return { tokens };
}

/** Refuses the expansions that run code or evaluate subscripts; `$NAME`, `${NAME}`, `$1`, `$?` pass. */
function checkExpansion(line: string, index: number): string | undefined {
  const next = line[index + 1];
  if (next === "(")
    return line[index + 2] === "("
      ? "arithmetic expansion cannot be checked"
      : "command substitution cannot be checked";
  if (next === "[") return "arithmetic expansion cannot be checked";
  if (next === "{" && !/^\$\{[A-Za-z_][A-Za-z0-9_]*\}/.test(line.slice(index)))
    return "only plain ${NAME} expansions are allowed (no ${NAME[...]}, ${NAME:-...} and the like)";
  return undefined;
}

/** A redirection: optional fd digit, the operator, its target word (unquoted). */
function readRedirect(line: string, start: number, fd: string): { text: string; end: number } | { error: string } {
  let index = start;
  let operator = fd;
  while (index < line.length && /[<>&|]/.test(line[index] as string) && operator.length < fd.length + 3)
    operator += line[index++] as string;
  while (index < line.length && (line[index] === " " || line[index] === "\t")) index += 1;
  let target = "";
  while (index < line.length && !/[\s;&|<>()]/.test(line[index] as string)) target += line[index++] as string;
  if (target === "") return { error: `redirection "${operator}" has no target` };
  if (/["'$`\\]/.test(target)) return { error: `redirection target ${target} must be plain` };
  return { text: `${operator}${target}`, end: index };
}
