/**
 * sqlite3 runs programs through dot-commands (`.shell`, `.system`, `.load`, pipes in
 * `.once`, `.output`, `.import`, `.read`), from its arguments, `-cmd` or its input.
 * `-safe` turns them off, but only from where it stands: options are read in order and
 * `-cmd` runs at once, so `-cmd '.shell id' -safe` runs id. Its grammar is read as data
 * (`-separator -safe` makes `-safe` a separator, not safe mode), `-safe` must come
 * before any `-cmd`, and `-init` (read before `-safe` takes effect), `-nonce` (lets a
 * command through safe mode) and `-unsafe-testing` are refused.
 */
import { readOptions, type OptionGrammar, type OptionSpec } from "./option-grammar.js";
import type { Word } from "./shell-words.js";

const spec = (names: string, option: OptionSpec): Record<string, OptionSpec> =>
  Object.fromEntries(names.split(" ").map((name) => [name, option]));

const SQLITE_GRAMMAR: OptionGrammar = {
  program: "sqlite3",
  short: {},
  long: {
    ...spec(
      "-append -ascii -bail -batch -box -column -csv -deserialize -echo -header -noheader -help -html -interactive -json -line -list -markdown -memtrace -nofollow -quote -readonly -safe -stats -table -tabs -version -zip -multiplex -pcachetrace -vfstrace -utf8 -no-utf8 -unsafe-testing -ifexists",
      {},
    ),
    ...spec("-cmd -init -maxsize -mmap -newline -nonce -nullvalue -separator -vfs -heap -sorterref -escape", {
      value: "next",
    }),
    ...spec("-lookaside -pagecache", { value: "next", words: 2 }),
    // `-A ARGS...`: the rest of the line is the archive command's.
    "-A": { ends: true },
  },
  clusters: false,
  operandEnds: false,
  equals: false,
  normalize: (name) => name.replace(/^--/, "-"),
};

const REFUSED: Record<string, string> = {
  "-init": "reads commands from a file before -safe takes effect",
  "-nonce": "sets the nonce that lets a command through safe mode",
  "-unsafe-testing": "turns off safety checks",
};

/** Dot-commands that run or load a program, by the prefixes sqlite3 accepts (`.sh` is `.shell`). */
const PROGRAM_COMMANDS = ["shell", "system", "load", "nonce"];

export function sqliteProblem(program: string, args: Word[]): string | undefined {
  const read = readOptions(args, { ...SQLITE_GRAMMAR, program });
  if ("problem" in read) return read.problem;
  let safe = false;
  for (const { name, written, value } of read.options) {
    const why = REFUSED[name];
    if (why) return `${program} ${written} ${why}`;
    if (name === "-safe") safe = true;
    if (name === "-cmd") {
      if (!safe) return `${program} -cmd runs its command before a later -safe takes effect; put -safe first`;
      const problem = dotCommandProblem(program, value ?? "");
      if (problem) return problem;
    }
  }
  if (!safe) return `${program} runs programs through .shell, .system and pipes unless started with -safe; add -safe`;
  // The database's name, then commands; -safe covers them, this names the refusal plainly.
  for (const command of read.endedBy === "-A" ? [] : read.operands.slice(1)) {
    const problem = dotCommandProblem(program, command);
    if (problem) return problem;
  }
  return undefined;
}

function dotCommandProblem(program: string, command: string): string | undefined {
  for (const line of command.split("\n")) {
    const [name = "", ...rest] = line.trim().split(/\s+/);
    if (!name.startsWith(".")) continue;
    const typed = name.slice(1);
    if (typed.length >= 2 && PROGRAM_COMMANDS.some((full) => full.startsWith(typed)))
      return `${program}: ${name} runs a program`;
    if (rest.some((argument) => /^["']?\|/.test(argument)))
      return `${program}: ${name} with | pipes to or from a program`;
  }
  return undefined;
}
