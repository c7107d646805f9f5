/**
 * Regular expressions for grep and glob run on RE2's engine (the `re2js` port): matching
 * takes time linear in the input whatever the pattern, so `^(a+)+$` over a long line
 * cannot hold the toolhost's single thread (and with it every other session of the
 * agent) the way a backtracking engine does. The price is RE2's syntax: no
 * backreferences and no lookaround, which a bad pattern's error says.
 *
 * Linear is not small: one test costs up to (instructions × characters), and
 * `[a-z]{1,1000}[0-9]` (2,002 instructions) over a 3.9 MB line held the child for minutes
 * (issue 32, item 2). So the work of one test is bounded, not only its time: a pattern is
 * refused when a repetition count or its compiled program is over a limit (before it is
 * compiled, when its text already says so: compiling is work too), and one test reads
 * at most MATCH_WORK_PER_TEST / instructions characters (never more than 64 KiB). With
 * these limits the worst pattern found over its longest text takes at most about 55 ms
 * of CPU on the bench machine (docs/toolhost.md), and callers yield to the event loop
 * between tests.
 */
import { RE2JS } from "re2js";
import { ToolError } from "../tool-error.js";
import { measurePattern } from "./regex-size.js";

/** A `{n,m}` count may be at most this (RE2 allows 1000). */
export const MAX_REPEAT_COUNT = 100;
/** A compiled program may hold at most this many instructions. */
export const MAX_PROGRAM_INSTRUCTIONS = 256;
/** One test reads at most this many characters (of a line, or a path). */
export const MAX_MATCH_CHARS = 64 * 1024;
/**
 * Instructions × characters one test may cost: RE2's automaton keeps at most one thread
 * per instruction per character, at worst about 100 ns each in re2js, so about 50 ms of CPU.
 */
export const MATCH_WORK_PER_TEST = 512 * 1024;
/** A pattern whose text promises more than this is refused without compiling it. */
const ESTIMATE_REFUSED = 8 * MAX_PROGRAM_INSTRUCTIONS;

export type LinearRegex = {
  /** Whether the pattern matches within the first `maxChars` characters of `text`. */
  test(text: string): boolean;
  /** How many characters of a text one test reads: the rest is never looked at. */
  readonly maxChars: number;
};

/** Compiles `pattern`; an invalid or too large one is INVALID_ARGS naming `what` and the reason. */
export function compileLinear(pattern: string, what: string): LinearRegex {
  const size = measurePattern(pattern);
  if (size.largestRepeat && size.largestRepeat.count > MAX_REPEAT_COUNT) {
    throw new ToolError(
      "INVALID_ARGS",
      `${what} repeats ${size.largestRepeat.text}: a repetition count may be at most ${MAX_REPEAT_COUNT} (each repetition is work on every character searched); use a smaller count, or + or *`,
    );
  }
  if (size.estimatedInstructions > ESTIMATE_REFUSED) throw tooLarge(what, `about ${size.estimatedInstructions}`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new ToolError(
      "INVALID_ARGS",
      `${what} is not a valid regular expression (RE2 syntax: no backreferences or lookaround): ${reason}`,
    );
  }
  const instructions = compiled.programSize();
  if (instructions > MAX_PROGRAM_INSTRUCTIONS) throw tooLarge(what, String(instructions));
  const maxChars = Math.min(MAX_MATCH_CHARS, Math.floor(MATCH_WORK_PER_TEST / Math.max(1, instructions)));
  return {
    // find(), not test(): test() runs re2js's cached DFA first, which a pattern like
    // [ab]*a[ab]{80} makes build a state per character (600 ms and 100 MB over 12 KiB);
    // find() runs the one-pass matcher, the bit-state backtracker or the NFA, each bounded
    // by instructions × characters, in a few kilobytes.
    test: (text) => compiled.matcher(text.length > maxChars ? text.slice(0, maxChars) : text).find(),
    maxChars,
  };
}

function tooLarge(what: string, instructions: string): ToolError {
  return new ToolError(
    "INVALID_ARGS",
    `${what} is too large: it compiles to ${instructions} instructions, more than ${MAX_PROGRAM_INSTRUCTIONS} (repetitions multiply: (?:x{1,20}){1,20} is 400 copies of x); simplify it`,
  );
}
