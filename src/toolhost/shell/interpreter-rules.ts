/**
 * perl, ruby, php, lua, Rscript and bun: each one's option grammar as data (which options
 * take a value, attached or as the next word), the options that put code on the command
 * line or read it from input, and the script, which must be a file. python and node
 * have modules of their own (python-rules.ts, node-rules.ts).
 */
import { readOptions, type OptionGrammar, type OptionSpec, type ReadOption } from "./option-grammar.js";
import { inputProblem } from "./script-source.js";
import type { Word } from "./shell-words.js";

export type Interpreter = {
  grammar: OptionGrammar;
  /** Options refused, by canonical name, with why. */
  refused: Readonly<Record<string, string>>;
  /** Options after which no script is needed (`--version`), or that name the script (php's `-f`). */
  standalone: ReadonlySet<string>;
  scriptOption?: ReadonlySet<string>;
  /** A check of one option's value (php's `-d` settings, ruby's `-r` library). */
  checkValue?: (program: string, option: ReadOption) => string | undefined;
};

const CODE = "runs code given on the command line; write a script with file.write and run that";
const INPUT = "runs code read from its input";
const flags = (letters: string): Record<string, OptionSpec> =>
  Object.fromEntries([...letters].map((letter) => [letter, {}]));
const longs = (names: string, spec: OptionSpec = {}): Record<string, OptionSpec> =>
  Object.fromEntries(names.split(" ").map((name) => [name, spec]));

export function interpreterProblem(interpreter: Interpreter, program: string, args: Word[]): string | undefined {
  const read = readOptions(args, { ...interpreter.grammar, program });
  if ("problem" in read) return read.problem;
  let script: string | undefined;
  for (const option of read.options) {
    const why = interpreter.refused[option.name];
    if (why)
      return `${program} ${option.name} ${why}${option.name === option.written ? "" : ` (in ${option.written})`}`;
    const problem = interpreter.checkValue?.(program, option);
    if (problem) return problem;
    if (interpreter.scriptOption?.has(option.name)) script = option.value;
  }
  script ??= read.operands[0];
  if (script === undefined) {
    return read.options.some(({ name }) => interpreter.standalone.has(name))
      ? undefined
      : `${program}: without a script file it runs code piped to it; write a script with file.write and run that`;
  }
  return inputProblem(program, "its script", script);
}

export const PERL: Interpreter = {
  grammar: {
    program: "perl",
    short: {
      ...flags("acfhnpsStTuUvwWX"),
      "0": { value: /^(x[0-9a-fA-F]*|[0-7]*)/ },
      l: { value: /^[0-7]*/ },
      ...Object.fromEntries([..."CiVxDdF"].map((letter) => [letter, { value: "rest" } as OptionSpec])),
      ...Object.fromEntries([..."IeEMm"].map((letter) => [letter, { value: "next" } as OptionSpec])),
    },
    long: longs("--help --version"),
    clusters: true,
    operandEnds: true,
    equals: false,
  },
  // -M'strict;system("id")' becomes `use strict;system("id");`; -F's pattern is pasted into code too.
  refused: {
    "-e": CODE,
    "-E": CODE,
    "-M": CODE,
    "-m": CODE,
    "-F": CODE,
    "-d": "starts the debugger, which runs commands read from its input",
    "-D": "is not checked by this allowlist",
  },
  standalone: new Set(["-h", "--help", "-v", "--version", "-V"]),
};

export const RUBY: Interpreter = {
  grammar: {
    program: "ruby",
    short: {
      ...flags("acdhlnpsSUvwy"),
      "0": { value: /^[0-7]*/ },
      ...Object.fromEntries([..."ixWKF"].map((letter) => [letter, { value: "rest" } as OptionSpec])),
      ...Object.fromEntries([..."CEIre"].map((letter) => [letter, { value: "next" } as OptionSpec])),
    },
    long: {
      ...longs("--copyright --version --help --verbose --debug --yydebug --jit --yjit --rjit"),
      ...longs(
        "--enable --disable --encoding --external-encoding --internal-encoding --dump --backtrace-limit --crash-report --parser",
        { value: "next" },
      ),
    },
    clusters: true,
    operandEnds: true,
    equals: true,
    unknownWithEquals: true,
  },
  refused: { "-e": CODE, "--crash-report": "names a command ruby runs when it crashes" },
  standalone: new Set(["-h", "--help", "-v", "--version", "--copyright"]),
  checkValue: (program, { name, value }) =>
    name === "-r" ? inputProblem(program, "the -r library", value ?? "") : undefined,
};

/** php.ini settings `-d` may set: none of them loads or names code (auto_prepend_file, extension, include_path do). */
const PHP_SETTINGS = new Set(
  "memory_limit display_errors display_startup_errors error_reporting log_errors html_errors max_execution_time date.timezone precision serialize_precision short_open_tag output_buffering implicit_flush default_charset".split(
    " ",
  ),
);
const PHP_LONG: Record<string, string> = {
  "--interactive": "-a",
  "--bindpath": "-b",
  "--no-chdir": "-C",
  "--php-ini": "-c",
  "--no-php-ini": "-n",
  "--define": "-d",
  "--profile-info": "-e",
  "--file": "-f",
  "--help": "-h",
  "--hide-args": "-H",
  "--info": "-i",
  "--syntax-check": "-l",
  "--modules": "-m",
  "--run": "-r",
  "--process-begin": "-B",
  "--process-code": "-R",
  "--process-file": "-F",
  "--process-end": "-E",
  "--no-header": "-q",
  "--syntax-highlight": "-s",
  "--syntax-highlighting": "-s",
  "--server": "-S",
  "--docroot": "-t",
  "--version": "-v",
  "--strip": "-w",
  "--zend-extension": "-z",
};
const PHP_SHORT: Record<string, OptionSpec> = {
  ...flags("aCehHilmnqsvw"),
  ...Object.fromEntries([..."bcdfrBRFEStz"].map((letter) => [letter, { value: "next" } as OptionSpec])),
};

export const PHP: Interpreter = {
  grammar: {
    program: "php",
    short: PHP_SHORT,
    long: {
      ...Object.fromEntries(Object.entries(PHP_LONG).map(([name, short]) => [name, PHP_SHORT[short.slice(1)] ?? {}])),
      ...longs("--rf --rc --re --rz --ri", { value: "next" }),
      ...longs("--ini"),
    },
    clusters: true,
    operandEnds: true,
    equals: true,
  },
  refused: Object.fromEntries(
    Object.entries({
      "-r": CODE,
      "-B": CODE,
      "-R": CODE,
      "-E": CODE,
      "-F": CODE,
      "-a": INPUT,
      "-z": "loads a Zend extension (native code)",
    }).flatMap(([short, why]) => [
      [short, why],
      ...Object.entries(PHP_LONG)
        .filter(([, same]) => same === short)
        .map(([long]) => [long, why]),
    ]),
  ),
  standalone: new Set([
    "-h",
    "--help",
    "-v",
    "--version",
    "-i",
    "--info",
    "-m",
    "--modules",
    "--ini",
    "--rf",
    "--rc",
    "--re",
    "--rz",
    "--ri",
    "-S",
    "--server",
  ]),
  scriptOption: new Set(["-f", "--file"]),
  checkValue: (program, { name, value }) => {
    if (name === "-d" || name === "--define") {
      const setting = (value ?? "").split("=")[0] ?? "";
      return PHP_SETTINGS.has(setting)
        ? undefined
        : `${program} -d ${setting}: only ${[...PHP_SETTINGS].join(", ")} may be set on the command line (auto_prepend_file, extension and others load code)`;
    }
    return name === "-c" || name === "--php-ini" ? inputProblem(program, "php.ini", value ?? "") : undefined;
  },
};

export const LUA: Interpreter = {
  grammar: {
    program: "lua",
    short: { ...flags("ivEW"), e: { value: "next" }, l: { value: "next" } },
    long: {},
    clusters: false,
    operandEnds: true,
    equals: false,
  },
  refused: { "-e": CODE, "-l": "loads a module named on the command line; require it from a script", "-i": INPUT },
  standalone: new Set(["-v"]),
};

export const RSCRIPT: Interpreter = {
  grammar: {
    program: "Rscript",
    short: { e: { value: "next" } },
    long: {
      ...longs(
        "--help --version --verbose --vanilla --no-environ --no-site-file --no-init-file --no-restore --no-restore-data --no-restore-history --no-save --save --restore --no-echo --quiet --silent --slave --no-readline --interactive",
      ),
      ...longs(
        "--default-packages --max-ppsize --min-vsize --max-vsize --min-nsize --max-nsize --encoding --file --debugger --debugger-args --gui",
        { value: "rest" },
      ),
      "--args": { ends: true },
    },
    clusters: false,
    operandEnds: true,
    equals: true,
  },
  refused: {
    "-e": CODE,
    "--interactive": INPUT,
    "--file": "names the script; run Rscript file.R",
    "--debugger": "runs the program it names",
    "--debugger-args": "runs the program it names",
    "--gui": "is not checked by this allowlist",
  },
  standalone: new Set(["--help", "--version"]),
};

/** bun's own commands: it runs packages (`bun x`), shell lines (`bun exec`) and a REPL; only `bun [run] FILE` is allowed. */
const BUN_COMMANDS = new Set(
  "exec x repl create c init install i add a remove rm update link unlink pm build upgrade publish outdated patch audit info why test".split(
    " ",
  ),
);

export function bunProblem(program: string, args: Word[]): string | undefined {
  const read = readOptions(args, {
    program,
    short: { v: {}, h: {} },
    long: longs("--version --help"),
    clusters: false,
    operandEnds: true,
    equals: false,
  });
  if ("problem" in read) return `${read.problem}; run bun FILE or bun run FILE`;
  const [first, second] = read.operands;
  const script = first === "run" ? second : first;
  if (script === undefined)
    return read.options.length > 0
      ? undefined
      : `${program}: without a script file it runs code piped to it; write a script with file.write and run that`;
  if (BUN_COMMANDS.has(script))
    return `${program} ${script} runs packages, commands or code that this allowlist does not check; only bun FILE and bun run FILE are allowed`;
  return inputProblem(program, "its script", script);
}
