/**
 * Splits a long answer into parts a platform accepts: at paragraph boundaries first,
 * then at line boundaries, and only a single line too long for one part is cut. `fits`
 * says whether a candidate part is acceptable (Telegram measures the HTML it becomes).
 */
export function splitText(text: string, fits: (part: string) => boolean): string[] {
  const trimmed = text.trim();
  if (trimmed === "") return [trimmed];
  return pack(trimmed, 0, fits)
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** Paragraphs first, then lines; whatever is still too long is cut. */
const LEVELS = [
  { split: /\n{2,}/, join: "\n\n" },
  { split: /\n/, join: "\n" },
];

/** Packs as many units of one level into each part as fit; a unit too long alone goes one level down. */
function pack(text: string, level: number, fits: (part: string) => boolean): string[] {
  if (fits(text)) return [text];
  const separator = LEVELS[level];
  if (!separator) return cutLine(text, fits);
  const parts: string[] = [];
  let current: string | undefined;
  for (const unit of text.split(separator.split)) {
    const joined = current === undefined ? unit : `${current}${separator.join}${unit}`;
    if (fits(joined)) {
      current = joined;
      continue;
    }
    if (current !== undefined) parts.push(current);
    current = undefined;
    if (fits(unit)) current = unit;
    else parts.push(...pack(unit, level + 1, fits));
  }
  if (current !== undefined) parts.push(current);
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
