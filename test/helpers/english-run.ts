/**
 * English left inside a Chinese text: two or more English words in a row (one alone may be
 * a name: OpenAI, Ctrl-C, LaodingBot). What may stay
 * in any language is removed first: placeholders, `code spans`, /commands, <arguments>,
 * environment variable names and words in capitals (API, LLM_MODEL), and `a|b` choices.
 */
export function englishRun(value: string): string | undefined {
  const kept = value
    .replace(/\{\w+\}/g, " ")
    .replace(/`[^`]*`/g, " ")
    .replace(/\/[a-z_]+/g, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\b[A-Z][A-Z0-9_]+\b/g, " ")
    .replace(/\b\w+(?:\|\w+)+/g, " ");
  return /[A-Za-z][A-Za-z'-]*(?:[ ,.;:]+[A-Za-z][A-Za-z'-]*)+/.exec(kept)?.[0];
}
