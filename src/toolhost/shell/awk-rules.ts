/**
 * awk's options (gawk's and mawk's, read by one grammar): a program from a file cannot
 * be checked, so `-f`, `--file`, `--exec`/`-E`, mawk's `-W exec FILE`, `--include`/`-i`
 * and `--load`/`-l` are refused, and so is the debugger (`-D`, `--debug`: it runs
 * commands read from its input). `-W` takes a value (`-W interactive` is one option, the
 * program comes after it); gawk reads `-W name` as `--name` and both cut names short
 * (`-W e`, `--so`), so a -W value that could be any of the refused options is refused.
 * The program text (the first operand, or each `-e`/`--source`) goes to awk-program.ts.
 */
import { awkProgramProblem } from "./awk-program.js";
import { readOptions, type OptionGrammar, type OptionSpec } from "./option-grammar.js";
import type { Word } from "./shell-words.js";

const flags = (names: string[]): Record<string, OptionSpec> => Object.fromEntries(names.map((name) => [name, {}]));
const NEXT: OptionSpec = { value: "next" };
const REST: OptionSpec = { value: "rest" };

const AWK_GRAMMAR: OptionGrammar = {
  program: "awk",
  short: {
    ...flags([..."bcCghknNOMPrsStVYI"]),
    F: NEXT,
    v: NEXT,
    f: NEXT,
    e: NEXT,
    E: NEXT,
    i: NEXT,
    l: NEXT,
    W: NEXT,
    Z: NEXT,
    d: REST,
    D: REST,
    L: REST,
    o: REST,
    p: REST,
  },
  long: {
    ...flags(
      "--characters-as-bytes --traditional --compat --copyright --gen-pot --help --usage --non-decimal-data --optimize --no-optimize --posix --re-interval --sandbox --use-lc-numeric --version --bignum --csv --trace --lint-old".split(
        " ",
      ),
    ),
    ...Object.fromEntries(
      "--assign --field-separator --file --source --include --load --exec --locale"
        .split(" ")
        .map((name) => [name, NEXT]),
    ),
    ...Object.fromEntries(
      "--debug --dump-variables --lint --pretty-print --profile".split(" ").map((name) => [name, REST]),
    ),
  },
  clusters: true,
  operandEnds: true,
  equals: true,
  prefixes: true,
};

const FROM_FILE = "loads a program or extension from a file, which cannot be checked";
const REFUSED: Record<string, string> = {
  "-f": FROM_FILE,
  "--file": FROM_FILE,
  "-E": FROM_FILE,
  "--exec": FROM_FILE,
  "-i": FROM_FILE,
  "--include": FROM_FILE,
  "-l": FROM_FILE,
  "--load": FROM_FILE,
  "-D": "starts the debugger, which runs commands read from its input",
  "--debug": "starts the debugger, which runs commands read from its input",
};
/** What a `-W` value may be: mawk's options and gawk's flags, each cut short as both allow. */
const W_SAFE =
  "version dump help usage interactive posix_space random sprintf lint posix traditional sandbox characters-as-bytes compat copyright non-decimal-data optimize no-optimize re-interval use-lc-numeric bignum csv".split(
    " ",
  );
/** `-W` names that read a program (`source`) or load one (`exec`, `file`...): mawk's `-W exec FILE` is `-f`. */
const W_REFUSED = ["exec", "file", "source", "include", "load", "debug"];

export function awkProblem(program: string, args: Word[]): string | undefined {
  const read = readOptions(args, { ...AWK_GRAMMAR, program });
  if ("problem" in read) return read.problem;
  let programSeen = false;
  for (const { name, written, value } of read.options) {
    const why = REFUSED[name];
    if (why) return `${program} ${written} ${why}`;
    if (name === "-W") {
      const problem = wValueProblem(program, value ?? "");
      if (problem) return problem;
    }
    if (name === "-e" || name === "--source") {
      programSeen = true;
      const problem = awkProgramProblem(value ?? "");
      if (problem) return `${program}: ${problem}`;
    }
  }
  const text = read.operands[0];
  if (programSeen || text === undefined) return undefined;
  const problem = awkProgramProblem(text);
  return problem ? `${program}: ${problem}` : undefined;
}

function wValueProblem(program: string, value: string): string | undefined {
  // mawk takes a comma list: `-W interactive,exec FILE`.
  for (const item of value.split(",")) {
    const name = (item.split("=")[0] ?? "").replace(/^--/, "");
    const refused = W_REFUSED.filter((full) => full.startsWith(name));
    if (name === "" || refused.length > 0) {
      const meaning =
        refused.length === 1 && refused[0] === name
          ? `-W ${item}`
          : `-W ${item} (it could mean -W ${refused.join(", -W ") || "anything"})`;
      const why = refused.includes("source")
        ? "takes program text this allowlist does not read there; use -e"
        : refused.includes("debug")
          ? "could start the debugger, or load a program from a file"
          : FROM_FILE;
      return `${program} ${meaning} ${why}`;
    }
    if (!W_SAFE.some((full) => full.startsWith(name)))
      return `${program} -W ${item} is not an option this allowlist knows`;
  }
  return undefined;
}
