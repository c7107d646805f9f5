/**
 * Splits a long answer into parts a platform accepts: at paragraph boundaries first,
 * then at line boundaries, and only a single line too long for one part is cut. `fits`
 * says whether a candidate part is acceptable (Telegram measures the HTML it becomes).
 */
export function splitText(text: string, fits: (part: string) => boolean): string[] {
  const trimmed = text.trim();
  if (trimmed === "" || fits(trimmed)) return [trimmed];
  const parts: string[] = [];
  let current = "";
  const flush = () => {
    if (current.trim() !== "") parts.push(current.trim());
    current = "";
  };
  for (const paragraph of trimmed.split(/\n{2,}/)) {
    const joined = current === "" ? paragraph : `${current}\n\n${paragraph}`;
    if (fits(joined)) {
      current = joined;
      continue;
    }
    flush();
    if (fits(paragraph)) {
      current = paragraph;
      continue;
    }
    for (const line of paragraph.split("\n")) {
      const withLine = current === "" ? line : `${current}\n${line}`;
      if (fits(withLine)) {
        current = withLine;
        continue;
      }
      flush();
      if (fits(line)) {
        current = line;
        continue;
      }
      for (const piece of cutLine(line, fits)) parts.push(piece);
    }
    flush();
  }
  flush();
  return parts;
}

/** The last resort: the longest prefixes that fit, preferring a cut at a space. */
function cutLine(line: string, fits: (part: string) => boolean): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest !== "" && !fits(rest)) {
    let low = 1;
    let high = rest.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (fits(rest.slice(0, middle))) low = middle;
      else high = middle - 1;
    }
    const space = rest.lastIndexOf(" ", low);
    const cut = space > low / 2 ? space : low;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== "") pieces.push(rest);
  return pieces;
}
