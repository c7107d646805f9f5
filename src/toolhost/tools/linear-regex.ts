/**
 * Regular expressions for grep and glob run on RE2's engine (the `re2js` port): matching
 * takes time linear in the input whatever the pattern, so `^(a+)+$` over a long line
 * cannot hold the toolhost's single thread (and with it every other session of the
 * agent) the way a backtracking engine does. The price is RE2's syntax: no
 * backreferences and no lookaround, which a bad pattern's error says.
 */
import { RE2JS } from "re2js";
import { ToolError } from "../tool-error.js";

export type LinearRegex = { test(text: string): boolean };

/** Compiles `pattern`; an invalid one is INVALID_ARGS naming `what` and RE2's reason. */
export function compileLinear(pattern: string, what: string): LinearRegex {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
    throw new ToolError("INVALID_ARGS", `${what} is not a valid regular expression (RE2 syntax: no backreferences or lookaround): ${reason}`);
  }
  return { test: (text) => compiled.matcher(text).find() };
}
