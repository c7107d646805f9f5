/**
 * Reads an interpreter's options by its real grammar, written as data: which options
 * take a value (attached, `-Wignore`, or the next word, `-W ignore`), which end option
 * parsing (python's `-c` and `-m`), whether single letters combine (`-bb`, `-IE`).
 * Guessing gets it wrong both ways: a value read as the script hides the options after
 * it (`python3 -W ignore -c ...`), an option read as a value hides itself
 * (`sqlite3 -separator -safe -cmd ...`). So an option the grammar does not know is
 * refused, and so is a separate value that looks like an option.
 */
import type { Word } from "./shell-words.js";

export type OptionSpec = {
  /**
   * - "next": the rest of the word if any (`-Wignore`, `--opt=v`), else the next word;
   * - "rest": only the rest of the word, if any (`-i.bak`, `--debug=file`);
   * - a RegExp: the leading part of the rest of the word it matches (perl's `-l015`),
   *   after which the cluster goes on (`-lne`).
   */
  value?: "next" | "rest" | RegExp;
  /** How many words a "next" value takes when it is not attached (sqlite3's `-pagecache SIZE N`). */
  words?: number;
  /** What follows this option (and its value) belongs to the program, not the interpreter. */
  ends?: boolean;
};

export type OptionGrammar = {
  program: string;
  /** Single-letter options (`-c`); combinable in one word when `clusters` is set. */
  short: Readonly<Record<string, OptionSpec>>;
  /** Whole-word options with their dashes (`--import`, `-cmd`, `-pe`). */
  long: Readonly<Record<string, OptionSpec>>;
  clusters: boolean;
  /** The first operand (the script, the program text) ends option parsing. */
  operandEnds: boolean;
  /** `--name=value` attaches a value to a whole-word option. */
  equals: boolean;
  /** A whole-word option may be cut to a unique prefix (getopt_long: `--sou` is `--source`). */
  prefixes?: boolean;
  /** The canonical spelling of a whole-word option (node: `_` is `-`; sqlite3: `--x` is `-x`). */
  normalize?: (name: string) => string;
  /** Whole-word options the tables do not name are accepted when their value is attached with `=` (node's V8 flags). */
  unknownWithEquals?: boolean;
};

/** One option as read: its canonical name (`-W`, `--import`), what was written, and its value. */
export type ReadOption = { name: string; written: string; value?: string };
/** The options in order; `operands` are the words from the first operand (or the end of options) on. */
export type ReadArguments = { options: ReadOption[]; operands: string[]; endedBy?: string };

/** A separate value that starts like an option (`-safe`, `-e`), but not a negative number or a lone `-`. */
const LOOKS_LIKE_OPTION = /^-[^\d]/;

export function readOptions(args: readonly Word[], grammar: OptionGrammar): ReadArguments | { problem: string } {
  const options: ReadOption[] = [];
  const operands: string[] = [];
  let endedBy: string | undefined;
  const takeNext = (
    index: number,
    spec: OptionSpec,
    option: string,
  ): { values: string[]; index: number } | { problem: string } => {
    const values = args.slice(index + 1, index + 1 + (spec.words ?? 1)).map((word) => word.text);
    if (values.length < (spec.words ?? 1)) return { problem: `${grammar.program} ${option} needs a value` };
    const optionLike = values.find((value) => LOOKS_LIKE_OPTION.test(value));
    if (optionLike)
      return {
        problem: `${grammar.program} ${option}'s value ${optionLike} looks like an option; attach the value to the option if it is one`,
      };
    return { values, index: index + values.length };
  };
  for (let index = 0; index < args.length; index += 1) {
    const text = (args[index] as Word).text;
    if (endedBy !== undefined) {
      operands.push(text);
      continue;
    }
    if (text === "--") {
      endedBy = "--";
      continue;
    }
    if (text === "-" || !text.startsWith("-")) {
      operands.push(text);
      if (grammar.operandEnds) endedBy = text;
      continue;
    }
    const whole = wholeWordOption(text, grammar);
    if (whole !== undefined) {
      if ("problem" in whole) return whole;
      const { name, spec, attached } = whole;
      let value = attached;
      if (spec?.value === "next" && value === undefined) {
        const next = takeNext(index, spec, text);
        if ("problem" in next) return next;
        value = next.values.join(" ");
        index = next.index;
      }
      options.push({ name, written: text, ...(value === undefined ? {} : { value }) });
      if (spec?.ends) endedBy = name;
      continue;
    }
    // A cluster of single letters: `-IE`, `-bb`, `-Wignore`, `-Im json.tool`, `-lne`.
    for (let at = 1; at < text.length; at += 1) {
      const letter = text[at] as string;
      const spec = grammar.short[letter];
      if (spec === undefined) return { problem: unknownOption(grammar, at === 1 ? text : `-${letter} (in ${text})`) };
      const rest = text.slice(at + 1);
      let value: string | undefined;
      if (spec.value instanceof RegExp) {
        value = spec.value.exec(rest)?.[0] ?? "";
        at += value.length;
      } else if (spec.value === "rest") {
        value = rest || undefined;
        at = text.length;
      } else if (spec.value === "next") {
        if (rest) value = rest;
        else {
          const next = takeNext(index, spec, `-${letter}`);
          if ("problem" in next) return next;
          value = next.values.join(" ");
          index = next.index;
        }
        at = text.length;
      }
      options.push({ name: `-${letter}`, written: text, ...(value === undefined || value === "" ? {} : { value }) });
      if (spec.ends) endedBy = `-${letter}`;
      if (!grammar.clusters && at + 1 < text.length) return { problem: unknownOption(grammar, text) };
    }
  }
  return { options, operands, ...(endedBy === undefined ? {} : { endedBy }) };
}

/** A word read as a whole-word option: undefined when it is a cluster of letters instead. */
function wholeWordOption(
  text: string,
  grammar: OptionGrammar,
): { name: string; spec: OptionSpec | undefined; attached?: string } | { problem: string } | undefined {
  const equals = grammar.equals ? text.indexOf("=") : -1;
  const written = equals > 0 ? text.slice(0, equals) : text;
  const attached = equals > 0 ? text.slice(equals + 1) : undefined;
  const name = grammar.normalize ? grammar.normalize(written) : written;
  const exact = grammar.long[name];
  if (exact) return { name, spec: exact, ...(attached === undefined ? {} : { attached }) };
  if (grammar.clusters && !text.startsWith("--")) return undefined;
  if (grammar.prefixes && name.startsWith("--")) {
    const candidates = Object.keys(grammar.long).filter((option) => option.startsWith(name));
    if (candidates.length > 1)
      return { problem: `${grammar.program} ${written} is ambiguous (${candidates.join(", ")})` };
    const [only] = candidates;
    if (only) return { name: only, spec: grammar.long[only], ...(attached === undefined ? {} : { attached }) };
  }
  if (!grammar.clusters && grammar.short[text[1] ?? ""] && !text.startsWith("--")) return undefined;
  if (grammar.unknownWithEquals && attached !== undefined) return { name, spec: undefined, attached };
  return { problem: unknownOption(grammar, written) };
}

function unknownOption(grammar: OptionGrammar, option: string): string {
  return `${grammar.program} ${option} is not an option this allowlist knows, so it cannot tell whether it takes a value`;
}
