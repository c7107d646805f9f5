/**
 * Glob to an RE2 expression: `**` (any folders), `*` and `?` (within one segment),
 * `{a,b}`, `[abc]`, `[!abc]`. A pattern without `/` matches the file name at any depth
 * (`*.ts`), like ripgrep's -g. Matching is linear-time (see linear-regex.ts): a pattern
 * like `*a*a*a*a*b` cannot stall the walk over long names.
 */
import { ToolError } from "../tool-error.js";
import { compileLinear, type LinearRegex } from "./linear-regex.js";

/** `label` names the pattern in errors. */
export function globToRegExp(pattern: string, label = `glob pattern ${pattern}`): string {
  let source = "";
  let inGroup = 0;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index] as string;
    if (char === "*") {
      if (pattern[index + 1] === "*") {
        const slash = pattern[index + 2] === "/";
        source += slash ? "(?:.*/)?" : ".*";
        index += slash ? 2 : 1;
      } else source += "[^/]*";
    } else if (char === "?") source += "[^/]";
    else if (char === "{") {
      inGroup += 1;
      source += "(?:";
    } else if (char === "}" && inGroup > 0) {
      inGroup -= 1;
      source += ")";
    } else if (char === "," && inGroup > 0) source += "|";
    else if (char === "[") {
      const end = pattern.indexOf("]", index + 1);
      if (end < 0) source += "\\[";
      else if (end === index + 1 || (end === index + 2 && pattern[index + 1] === "!"))
        throw new ToolError("INVALID_ARGS", `${label}: empty [] class`);
      else {
        const body = pattern.slice(index + 1, end).replace(/\\/g, "\\\\");
        source += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        index = end;
      }
    } else source += char.replace(/[.+^$()|\\\]{}]/g, "\\$&");
  }
  if (inGroup > 0) throw new ToolError("INVALID_ARGS", `${label}: a { is never closed`);
  // (?s): `*` and `**` match names holding a newline too.
  return `(?s)^${source}$`;
}

/** `what` names the argument in errors (`pattern`, `glob`). */
export function globMatcher(pattern: string, what = "glob pattern"): (relativePath: string) => boolean {
  const label = `${what} ${pattern}`;
  const regex: LinearRegex = compileLinear(globToRegExp(pattern.replace(/^\.\//, ""), label), label);
  const byName = !pattern.includes("/");
  return (relativePath) => regex.test(byName ? (relativePath.split("/").pop() ?? relativePath) : relativePath);
}
