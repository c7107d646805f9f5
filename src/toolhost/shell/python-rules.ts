/**
 * python: its option grammar (CPython's getopt: `-c` and `-m` end the options, `-W` and
 * `-X` take a value, letters combine: `-IE`, `-bb`, `-Wignore`), then what it may run.
 * Refused: `-c` (code on the command line), `-i` (after the script it reads code from
 * its input), a script read from its input (`-`, `/dev/stdin`, `/proc/self/fd/0`),
 * no script at all (`echo CODE | python3`), and `-m` modules other than a few that read
 * only data. That is an allow list, not a deny list: many modules run code named on
 * their command line or read from their input (timeit, pdb, code, runpy, profile,
 * cProfile, trace, doctest, idlelib, asyncio, pickle...), and even `unittest` runs it
 * (`python3 -m unittest "CODE" timeit.main` calls timeit's main, which runs its
 * arguments), so a list of the dangerous ones could never be complete.
 */
import { inputProblem } from "./script-source.js";
import { readOptions, type OptionGrammar } from "./option-grammar.js";
import type { Word } from "./shell-words.js";

const FLAG = {};
const PYTHON_GRAMMAR: OptionGrammar = {
  program: "python",
  short: {
    ...Object.fromEntries([..."bBdEhiIOPqRsSuvVx?"].map((letter) => [letter, FLAG])),
    c: { value: "next", ends: true },
    m: { value: "next", ends: true },
    W: { value: "next" },
    X: { value: "next" },
  },
  long: {
    "--help": FLAG,
    "--help-env": FLAG,
    "--help-xoptions": FLAG,
    "--help-all": FLAG,
    "--version": FLAG,
    "--check-hash-based-pycs": { value: "next" },
  },
  clusters: true,
  operandEnds: true,
  equals: false,
};

/** `-m` modules whose command line names only data: files to read or write, nothing to run or import. */
export const PYTHON_DATA_MODULES: ReadonlySet<string> = new Set(
  "json.tool base64 gzip zipfile tarfile py_compile compileall tokenize ast calendar platform sysconfig site".split(
    " ",
  ),
);

/** Options after which python prints something and exits, needing no script. */
const STANDALONE = new Set(["-h", "-?", "--help", "--help-env", "--help-xoptions", "--help-all", "-V", "--version"]);

export function pythonProblem(program: string, args: Word[]): string | undefined {
  const read = readOptions(args, { ...PYTHON_GRAMMAR, program });
  if ("problem" in read) return read.problem;
  for (const { name, value } of read.options) {
    if (name === "-c")
      return `${program} -c runs code given on the command line; write a script with file.write and run that`;
    if (name === "-i") return `${program} -i runs code read from its input after the script; run the script alone`;
    if (name === "-m" && !PYTHON_DATA_MODULES.has(value ?? "")) {
      return `${program} -m ${value} is not one of the modules that read only data (${[...PYTHON_DATA_MODULES].join(", ")}): many modules run code from their command line or input; write a script with file.write and run that`;
    }
  }
  if (read.endedBy === "-m") return undefined;
  const script = read.operands[0];
  if (script === undefined) {
    return read.options.some(({ name }) => STANDALONE.has(name))
      ? undefined
      : `${program}: without a script file it runs code piped to it; write a script with file.write and run that`;
  }
  return inputProblem(program, "its script", script);
}
