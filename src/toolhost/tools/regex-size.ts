/**
 * A pattern's size, read from its text before RE2 compiles it. Compiling is itself work
 * an agent can make huge: RE2 admits repetition counts up to 1000 and nested ones
 * multiplying up to 1000, so 900 letters repeated `{1000}` compile to 900,000
 * instructions (2.7 s and 150 MB in the child). This scan finds the largest repetition
 * count and an upper estimate of the compiled program, so such a pattern is refused
 * before anything is built. It only needs to find where atoms and groups begin and end
 * (escapes, `\Q…\E`, classes, groups); RE2's parser still decides what is valid.
 */

export type PatternSize = {
  /** The largest `{n}`, `{n,}` or `{n,m}` count, and how it was written. */
  largestRepeat: { count: number; text: string } | undefined;
  /** An upper estimate of the instructions RE2 compiles the pattern to. */
  estimatedInstructions: number;
};

type Frame = { total: number; last: number };

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

export function measurePattern(pattern: string): PatternSize {
  const stack: Frame[] = [{ total: 0, last: 0 }];
  let largestRepeat: PatternSize["largestRepeat"];
  const top = () => stack[stack.length - 1] as Frame;
  const atom = (weight: number) => {
    top().total += weight;
    top().last = weight;
  };
  for (let index = 0; index < pattern.length; ) {
    const char = pattern[index] as string;
    if (char === "\\") {
      const end = escapeEnd(pattern, index);
      // A quoted run is one instruction per character.
      atom(pattern[index + 1] === "Q" ? Math.max(1, end - index - 4) : 1);
      index = end;
    } else if (char === "[") {
      atom(1);
      index = classEnd(pattern, index);
    } else if (char === "(") {
      stack.push({ total: 0, last: 0 });
      index += 1;
    } else if (char === ")" && stack.length > 1) {
      const group = stack.pop() as Frame;
      atom(group.total + 2);
      index += 1;
    } else if (char === "{" && REPEAT.test(pattern.slice(index, index + 24))) {
      const [text, low, hasComma, high] = REPEAT.exec(pattern.slice(index, index + 24)) as RegExpExecArray;
      // `x{n,}` compiles to n copies and a star; `x{n,m}` to m copies, each optional one with a branch.
      const count =
        hasComma === undefined
          ? Number(low)
          : high === "" || high === undefined
            ? Number(low) + 1
            : Math.max(Number(low), Number(high));
      if (largestRepeat === undefined || count > largestRepeat.count) largestRepeat = { count, text };
      const frame = top();
      frame.total += frame.last * (2 * count - 1);
      frame.last *= 2 * count;
      index += text.length;
    } else if (char === "*" || char === "+" || char === "?" || char === "|") {
      top().total += 1;
      if (char === "|") top().last = 0;
      index += 1;
    } else {
      atom(1);
      index += 1;
    }
  }
  // Groups left open are RE2's error to report; their contents still count.
  const estimatedInstructions = stack.reduce((sum, frame) => sum + frame.total, 0) + 2;
  return { largestRepeat, estimatedInstructions };
}

/** The index after the escape starting at `index` (`\x`, `\pL`, `\p{Greek}`, `\x{263a}`, `\Q…\E`). */
function escapeEnd(pattern: string, index: number): number {
  const next = pattern[index + 1];
  if (next === "Q") {
    const end = pattern.indexOf("\\E", index + 2);
    return end < 0 ? pattern.length : end + 2;
  }
  if ((next === "p" || next === "P" || next === "x") && pattern[index + 2] === "{") {
    const end = pattern.indexOf("}", index + 3);
    return end < 0 ? pattern.length : end + 1;
  }
  if (next === "p" || next === "P") return Math.min(pattern.length, index + 3);
  return Math.min(pattern.length, index + 2);
}

/** The index after the character class starting at `index` (`[]a]`, `[^]a]`, `[[:alpha:]]`, escapes). */
function classEnd(pattern: string, index: number): number {
  let at = index + 1;
  if (pattern[at] === "^") at += 1;
  if (pattern[at] === "]") at += 1;
  while (at < pattern.length && pattern[at] !== "]") {
    if (pattern[at] === "\\") at = escapeEnd(pattern, at);
    else if (pattern.startsWith("[:", at)) {
      const end = pattern.indexOf(":]", at + 2);
      at = end < 0 ? at + 1 : end + 2;
    } else at += 1;
  }
  return Math.min(pattern.length, at + 1);
}
