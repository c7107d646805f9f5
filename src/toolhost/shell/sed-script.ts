/**
 * GNU sed executes commands with the `e` command and the `e` flag of `s///`. This reads a
 * sed script command by command (addresses, `{}` blocks, `s`/`y` with any delimiter,
 * text and file-name arguments to the end of the line) and reports those forms. Writes
 * (`w`, `W`, the `w` flag) stay allowed: the OS sandbox decides where they may land.
 * A script it cannot read is refused rather than guessed at.
 */
const SIMPLE = new Set(["=", "d", "D", "g", "G", "h", "H", "l", "n", "N", "p", "P", "x", "z", "F", "q", "Q", "L"]);
const TO_END_OF_LINE = new Set(["a", "i", "c", "r", "R", "w", "W", "b", "t", "T", ":", "v", "#"]);

export function sedScriptProblem(script: string): string | undefined {
  let index = 0;
  const at = () => script[index] ?? "";
  const skipBlanks = () => {
    while (index < script.length && /[\s;]/.test(at())) index += 1;
  };
  const toEndOfLine = () => {
    const newline = script.indexOf("\n", index);
    index = newline < 0 ? script.length : newline;
  };
  const skipAddress = (): string | undefined => {
    for (let part = 0; part < 2; part += 1) {
      if (/[0-9$]/.test(at())) {
        while (/[0-9$~+]/.test(at())) index += 1;
      } else if (at() === "/" || at() === "\\") {
        const delimiter = at() === "\\" ? script[index + 1] : "/";
        if (delimiter === undefined) return "an address is cut short";
        index += at() === "\\" ? 2 : 1;
        const end = delimited(script, index, delimiter);
        if (end < 0) return "an address regex is never closed";
        index = end + 1;
        while (/[IM]/.test(at())) index += 1;
      } else if (part === 1 && /[+~]/.test(at())) {
        index += 1;
        while (/[0-9]/.test(at())) index += 1;
      }
      while (/\s/.test(at()) && at() !== "\n") index += 1;
      if (part === 0 && at() === ",") {
        index += 1;
        while (/\s/.test(at()) && at() !== "\n") index += 1;
      } else break;
    }
    if (at() === "!") index += 1;
    while (/\s/.test(at()) && at() !== "\n") index += 1;
    return undefined;
  };
  for (skipBlanks(); index < script.length; skipBlanks()) {
    const addressProblem = skipAddress();
    if (addressProblem) return addressProblem;
    const command = at();
    index += 1;
    if (command === "e") return "the e command runs a shell command";
    if (command === "{" || command === "}" || SIMPLE.has(command)) {
      if (command === "q" || command === "Q" || command === "l" || command === "L")
        while (/[0-9 ]/.test(at())) index += 1;
      continue;
    }
    if (TO_END_OF_LINE.has(command)) {
      toEndOfLine();
      continue;
    }
    if (command === "s" || command === "y") {
      const delimiter = at();
      if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return `${command} has no delimiter`;
      const middle = delimited(script, index + 1, delimiter);
      const end = middle < 0 ? -1 : delimited(script, middle + 1, delimiter);
      if (end < 0) return `an ${command} command is never closed`;
      index = end + 1;
      if (command === "y") continue;
      while (/[gpiImMe0-9w]/.test(at())) {
        if (at() === "e") return "the e flag of s/// runs the result as a shell command";
        if (at() === "w") {
          toEndOfLine();
          break;
        }
        index += 1;
      }
      continue;
    }
    return `cannot read the sed command ${JSON.stringify(command)}`;
  }
  return undefined;
}

/** Index of the next unescaped `delimiter` from `start`, or -1. */
function delimited(text: string, start: number, delimiter: string): number {
  for (let index = start; index < text.length; index += 1) {
    if (text[index] === "\\") index += 1;
    else if (text[index] === delimiter) return index;
    else if (text[index] === "\n" && delimiter !== "\n") return -1;
  }
  return -1;
}
