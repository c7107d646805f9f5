/**
 * What makes a line of learned text unsafe to put in front of a model, whoever reads it
 * later: characters a person reviewing it cannot see (a payload hidden in variation
 * selectors, tag characters or blank-looking fillers), links, a download piped into an
 * interpreter, and commands that fetch code from the network and run it. Each finder
 * returns what it found, so a refusal can name it; `undefined` means none.
 */

/**
 * Hidden characters. The two properties cover zero-width and format characters, bidi
 * controls, variation selectors (U+FE00-FE0F, U+E0100-E01EF), tag characters and the
 * Hangul fillers (U+115F, U+1160, U+3164, U+FFA0); U+2800 (a blank braille cell) and the
 * line and paragraph separators U+2028/2029 are in neither and are listed. Control
 * characters other than tab and newline (a newline has its own check), private-use code
 * points and lone surrogates carry nothing a lesson needs either.
 */
const HIDDEN =
  /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Co}\p{Cs}\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u2800]/u;

/** Any `scheme://`, and a bare `www.` host. */
const URL = /(?<![\p{L}\p{N}])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s`'")\]]*|(?<![\p{L}\p{N}.])www\.[^\s`'")\]]+/iu;

const INTERPRETERS = String.raw`(?:ba|z|k|c|tc|da|a|fi|yash|mk)?sh|python(?:[23](?:\.\d+)?)?|perl|ruby|node(?:js)?|deno|bun|php|lua|tclsh|pwsh|powershell(?:\.exe)?|iex|invoke-expression|cmd(?:\.exe)?|eval|osascript`;

/**
 * A pipe (not `||`) into an interpreter, through `sudo [flags]`, `env` or an absolute
 * path: `| sh`, `|bash`, `| sudo -E bash -s`, `| /usr/bin/env python3`, `| iex`.
 */
const PIPE_INTO_SHELL = new RegExp(
  String.raw`(?<!\|)\|(?!\|)\s*(?:sudo(?:\s+-[^\s|;&]*(?:\s+(?!-)[^\s|;&]+)?)*\s+)?(?:(?:/usr)?(?:/local)?/bin/)?(?:env\s+)?(?:(?:/usr)?(?:/local)?/bin/)?(?:${INTERPRETERS}|source)(?![\w-]|\.[a-z])`,
  "i",
);

const WORD_START = String.raw`(?<![\w.-])`;
const WORD_END = String.raw`(?![\w-])`;

/** Tools whose job is to fetch from the network. */
const DOWNLOADER = new RegExp(
  `${WORD_START}(?:curl|wget2?|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod|certutil|bitsadmin|start-bitstransfer)${WORD_END}`,
  "i",
);

/** Running something: an interpreter, `chmod +x`, `./file`, `. file`, `source <(…)`. */
const RUNS = new RegExp(
  `${WORD_START}(?:${INTERPRETERS}|exec|start-process)${WORD_END}|${WORD_START}source\\s+(?:<\\(|\\S+\\.(?:sh|bash|ps1|py))|chmod\\s+(?:[ugoa]*\\+\\w*x|[0-7]{3,4})|(?:^|[\\s;&|(\`'"])\\.{1,2}/[\\w.-]+|(?:^|[;&|]\\s*)\\.\\s+[\\w./~-]`,
  "i",
);

/** Commands that download and run a package in one step. */
const RUN_FROM_REGISTRY = new RegExp(
  `${WORD_START}(?:npx|pnpx|bunx|uvx)${WORD_END}|${WORD_START}(?:pnpm|yarn|bun)\\s+dlx${WORD_END}|${WORD_START}pipx\\s+run${WORD_END}`,
  "i",
);

/** A package manager told to install or run from a URL, a VCS reference or another index. */
const INSTALL_FROM_URL = new RegExp(
  `${WORD_START}(?:pip3?|uv\\s+pip|npm|pnpm|yarn|bun|gem|go|cargo|deno|composer)\\s+(?:install|add|i|get|run)${WORD_END}[^;&|\\n]*?(?:[a-z][\\w+.-]*://|git\\+|www\\.|--(?:extra-)?index-url|--git${WORD_END})`,
  "i",
);

/** `U+200B`: how a refusal names a code point. */
export function codePointName(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The first hidden character and its position (1-based, in code points). */
export function hiddenCharacter(text: string): { codePoint: string; position: number } | undefined {
  const chars = [...text];
  const index = chars.findIndex((char) => HIDDEN.test(char));
  return index < 0 ? undefined : { codePoint: codePointName(chars[index] as string), position: index + 1 };
}

/** Fullwidth look-alikes (`｜ ｓｈ`, `https：／／`) read as what they mean to a model. */
function folded(text: string): string {
  return text.normalize("NFKC");
}

export function urlIn(text: string): string | undefined {
  return URL.exec(folded(text))?.[0];
}

export function pipeIntoShell(text: string): string | undefined {
  return PIPE_INTO_SHELL.exec(folded(text))?.[0].trim();
}

/** A command that fetches code from the network and runs it, named by what matched. */
export function networkCommand(text: string): string | undefined {
  const plain = folded(text);
  const download = DOWNLOADER.exec(plain);
  const run = download ? RUNS.exec(plain) : null;
  if (download && run) return `${download[0]} … ${run[0].trim()}`;
  return RUN_FROM_REGISTRY.exec(plain)?.[0] ?? INSTALL_FROM_URL.exec(plain)?.[0];
}

export type UnsafeText = { reason: string; hold?: true };

/**
 * Why a line of learned text must not reach a prompt as it is: refused (hidden
 * characters, a pipe into a shell, a URL) or, for a command that runs code from the
 * network, held for an operator. A held command usually names its URL, so it is held
 * rather than refused for the URL.
 */
export function unsafeText(text: string): UnsafeText | undefined {
  const hidden = hiddenCharacter(text);
  if (hidden)
    return {
      reason: `contains ${hidden.codePoint} at character ${hidden.position}, an invisible or format character that hides text from whoever reads it`,
    };
  const pipe = pipeIntoShell(text);
  if (pipe)
    return {
      reason: `pipes into a shell interpreter ("${quote(pipe)}"); learned text never tells the bot to run a download`,
    };
  const network = networkCommand(text);
  if (network) return { hold: true, reason: `names a command that runs code from the network ("${quote(network)}")` };
  const url = urlIn(text);
  if (url)
    return { reason: `contains a URL ("${quote(url)}"); learned text names commands, flags and paths, not links` };
  return undefined;
}

function quote(found: string): string {
  return found.length > 60 ? `${found.slice(0, 57)}...` : found;
}
