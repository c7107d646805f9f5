/**
 * A configuration problem an operator can fix; the CLI prints message and hint, no stack.
 * `findings` lists every problem found, each naming where it is (a file and, for JSON
 * files, line:column), so a checker can show them all instead of only the first.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly hint: string | undefined;
  /** Every problem, each naming where it is; a single problem is the message without the hint. */
  readonly findings: string[];

  constructor(message: string, options: { hint?: string; cause?: unknown; findings?: string[] } = {}) {
    super(options.hint ? `${message}. ${options.hint}` : message, { cause: options.cause });
    this.hint = options.hint;
    this.findings = options.findings ?? [message];
  }
}

/** `line:column` (both from 1) of a character offset in a text. */
export function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split("\n").length;
  return `${line}:${offset - before.lastIndexOf("\n")}`;
}

/**
 * Where JSON.parse stopped, as `:line:column` to put after a file name: V8 says "at
 * position N" (Node 20) or "(line L column C)" (later versions); "Unexpected end" means
 * the end of the text. Some messages name no place ("Unexpected token ',', ..."): then
 * nothing, rather than a place that is not where the problem is.
 */
export function jsonErrorLocation(text: string, error: Error): string {
  const lineAndColumn = /line (\d+) column (\d+)/.exec(error.message);
  if (lineAndColumn) return `:${lineAndColumn[1]}:${lineAndColumn[2]}`;
  const position = /at position (\d+)/.exec(error.message);
  if (position) return `:${lineColumn(text, Number(position[1]))}`;
  return /Unexpected end/.test(error.message) ? `:${lineColumn(text, text.trimEnd().length)}` : "";
}

/**
 * The offset in a JSON text of the value at `path` (an object member's key, an array
 * element's first character), or undefined when the path is not there. A small scanner:
 * the text already parsed, so it only has to skip values, not judge them.
 */
export function jsonPathOffset(text: string, path: readonly PropertyKey[]): number | undefined {
  let position = 0;
  const skipSpace = () => {
    while (position < text.length && /\s/.test(text[position] as string)) position += 1;
  };
  const skipString = () => {
    const start = position;
    position += 1;
    while (position < text.length && text[position] !== '"') position += text[position] === "\\" ? 2 : 1;
    position += 1;
    return JSON.parse(text.slice(start, position)) as string;
  };
  const skipValue = (): void => {
    skipSpace();
    const open = text[position];
    if (open === '"') return void skipString();
    if (open !== "{" && open !== "[") {
      while (position < text.length && !/[\s,\]}]/.test(text[position] as string)) position += 1;
      return;
    }
    position += 1;
    for (;;) {
      skipSpace();
      if (text[position] === "}" || text[position] === "]" || position >= text.length) return void (position += 1);
      if (text[position] === ",") position += 1;
      else if (open === "{") {
        skipString();
        skipSpace();
        position += 1; // the colon
        skipValue();
      } else skipValue();
    }
  };
  // Descends one path step at a time: into the member named, or the element counted.
  for (const [depth, step] of path.entries()) {
    skipSpace();
    const open = text[position];
    if (open !== "{" && open !== "[") return undefined;
    position += 1;
    let index = 0;
    for (;;) {
      skipSpace();
      if (position >= text.length || text[position] === "}" || text[position] === "]") return undefined;
      if (text[position] === ",") {
        position += 1;
        continue;
      }
      if (open === "{") {
        const keyAt = position;
        const key = skipString();
        if (key === String(step)) {
          skipSpace();
          position += 1;
          if (depth === path.length - 1) return keyAt;
          break;
        }
        skipSpace();
        position += 1;
        skipValue();
      } else {
        skipSpace();
        if (index === Number(step)) break;
        skipValue();
        index += 1;
      }
    }
  }
  skipSpace();
  return position;
}

/** `file:line:column` of a path in a JSON text, or the file alone when the path is not there. */
export function locateJsonPath(text: string, origin: string, path: readonly PropertyKey[]): string {
  // A path that stops at a missing member points at the nearest thing that exists.
  for (let length = path.length; length >= 0; length -= 1) {
    const offset = jsonPathOffset(text, path.slice(0, length));
    if (offset !== undefined) return `${origin}:${lineColumn(text, offset)}`;
  }
  return origin;
}
