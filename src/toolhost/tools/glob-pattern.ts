/**
 * Glob to RegExp: `**` (any folders), `*` and `?` (within one segment), `{a,b}`, `[abc]`.
 * A pattern without `/` matches the file name at any depth (`*.ts`), like ripgrep's -g.
 */
export function globToRegExp(pattern: string): RegExp {
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
      else {
        const body = pattern.slice(index + 1, end).replace(/\\/g, "\\\\");
        source += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        index = end;
      }
    } else source += char.replace(/[.+^$()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

export function globMatcher(pattern: string): (relativePath: string) => boolean {
  const regex = globToRegExp(pattern.replace(/^\.\//, ""));
  const byName = !pattern.includes("/");
  return (relativePath) => regex.test(byName ? (relativePath.split("/").pop() ?? relativePath) : relativePath);
}
