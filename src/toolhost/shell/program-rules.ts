/**
 * Per-program rules: the executing and assigning forms of programs and builtins the
 * allowlist may let through. Each rule gets the words after the command name and says
 * what is wrong, or nothing. These programs are interpreters in disguise; the rules
 * refuse the forms that put code on the command line, they do not make an interpreter
 * safe (see docs/command-allowlist.md).
 */
import { awkProblem } from "./awk-rules.js";
import { gitProblem } from "./git-rules.js";
import {
  bunProblem,
  interpreterProblem,
  LUA,
  PERL,
  PHP,
  RSCRIPT,
  RUBY,
  type Interpreter,
} from "./interpreter-rules.js";
import { nodeProblem } from "./node-rules.js";
import { pythonProblem } from "./python-rules.js";
import { sedScriptProblem } from "./sed-script.js";
import { sqliteProblem } from "./sqlite-rules.js";
import type { Word } from "./shell-words.js";

type Rule = (args: Word[]) => string | undefined;

/** `-o Name=value` / `-oName=value` options of ssh, scp and sftp that name a local program. */
const SSH_PROGRAM_OPTION = /^(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Match)\b/i;

/** Options of ssh, scp and sftp that take a value (the next word when not attached). */
const SSH_VALUE_FLAGS = "BbcDEeFIiJLlmOoPpQRSWwX";

/**
 * ssh and its kin: options that run a local program (`-o ProxyCommand=...`, scp -S,
 * sftp -S/-D) and config files (-F), which could name one. Every word is looked at:
 * ssh takes options after their values.
 */
function sshRule(name: string, programFlags: string): Rule {
  return (args) => {
    for (let index = 0; index < args.length; index += 1) {
      const text = (args[index] as Word).text;
      if (!/^-[A-Za-z0-9]/.test(text)) continue;
      for (let at = 1; at < text.length; at += 1) {
        const flag = text[at] as string;
        if (!SSH_VALUE_FLAGS.includes(flag)) continue;
        const value = text.slice(at + 1) || args[index + 1]?.text || "";
        if (programFlags.includes(flag)) return `${name} -${flag} runs a program`;
        if (flag === "F") return `${name} -F reads a config file, which can name programs to run`;
        if (flag === "o" && SSH_PROGRAM_OPTION.test(value.replace(/^["']/, "")))
          return `${name} -o ${value.split(/[= ]/)[0]} runs a local program`;
        break;
      }
    }
    return undefined;
  };
}

/** make: recipes are the agent's own files (a script), but code on the command line is not. */
const makeRule: Rule = (args) => {
  for (let index = 0; index < args.length; index += 1) {
    const text = (args[index] as Word).text;
    if (/^(--eval|-E)(=|$)/.test(text)) return `make ${text} runs code given on the command line`;
    if (/^(-f|--file|--makefile)$/.test(text) && /^(-|\/dev\/stdin|\/proc\/)/.test(args[index + 1]?.text ?? ""))
      return "make reading a makefile from its input runs code piped to it; write a Makefile with file.write";
    if (
      /^[^-][^=]*(!=|=)/.test(text) &&
      (/^[^=]*!=/.test(text) || /\$[({]|^(SHELL|MAKESHELL|\.SHELLFLAGS)[:+?]?=/.test(text))
    )
      return `make ${text} runs code given on the command line`;
  }
  return undefined;
};

const interpreterRule =
  (interpreter: Interpreter): Rule =>
  (args) =>
    interpreterProblem(interpreter, interpreter.grammar.program, args);

const sedRule: Rule = (args) => {
  let scriptSeen = false;
  for (let index = 0; index < args.length; index += 1) {
    const text = (args[index] as Word).text;
    if (/^(-f|--file)(=|$)/.test(text) || /^-[a-zA-Z]*f/.test(text))
      return `sed ${text} reads a script from a file, which cannot be checked`;
    let script: string | undefined;
    if (text === "-e" || text === "--expression") script = args[(index += 1)]?.text ?? "";
    else if (text.startsWith("--expression=")) script = text.slice(13);
    else if (/^-[a-zA-Z]*e./.test(text)) script = text.slice(text.indexOf("e") + 1);
    else if (/^-[a-zA-Z]*e$/.test(text)) script = args[(index += 1)]?.text ?? "";
    else if (/^(-l|--line-length)$/.test(text)) index += 1;
    else if (!text.startsWith("-") && !scriptSeen) script = text;
    if (script === undefined) continue;
    scriptSeen = true;
    const problem = sedScriptProblem(script);
    if (problem) return `sed: ${problem}`;
  }
  return undefined;
};

const findRule: Rule = (args) => {
  const bad = args.find(({ text }) => /^-(exec|execdir|ok|okdir)$/.test(text));
  return bad ? `find ${bad.text} runs other commands` : undefined;
};

const optionRule =
  (name: string, pattern: RegExp, why: string): Rule =>
  (args) => {
    const bad = args.find(({ text }) => pattern.test(text));
    return bad ? `${name} ${bad.text} ${why}` : undefined;
  };

/** `printf -v NAME` assigns (and evaluates a subscript in NAME). */
const printfRule: Rule = (args) => {
  const first = args[0];
  if (!first) return undefined;
  if (first.dynamic) return "printf's first word must be written out (an expansion could become -v)";
  if (/^-v/.test(first.text)) return "printf -v assigns a variable (and evaluates array subscripts)";
  if (first.text === "--" && args[1]?.dynamic) return "printf's format must be written out";
  return undefined;
};

/** `test -v NAME` / `[ -R NAME ]` evaluate array subscripts; an expansion could become those operators. */
const testRule: Rule = (args) => {
  const dynamic = args.find((word) => word.dynamic);
  if (dynamic) return `test and [ take written-out words only (${dynamic.raw} is expanded by bash and could become -v)`;
  const bad = args.find(({ text }) => text === "-v" || text === "-R");
  return bad ? `test ${bad.text} evaluates array subscripts, which can run code` : undefined;
};

/** `env` alone prints the (clean) environment; with a command or an assignment it runs or changes one. */
const envRule: Rule = (args) =>
  args.every(({ text }) => text === "-0" || text === "--null")
    ? undefined
    : "env runs commands or changes the environment; only a bare `env` is allowed";

/** The rule of each program or builtin that has executing or assigning forms. */
export const PROGRAM_RULES: Record<string, Rule> = {
  awk: (args) => awkProblem("awk", args),
  gawk: (args) => awkProblem("gawk", args),
  mawk: (args) => awkProblem("mawk", args),
  nawk: (args) => awkProblem("nawk", args),
  sed: sedRule,
  gsed: sedRule,
  find: findRule,
  git: gitProblem,
  printf: printfRule,
  test: testRule,
  "[": testRule,
  env: envRule,
  python: (args) => pythonProblem("python", args),
  python3: (args) => pythonProblem("python3", args),
  python2: (args) => pythonProblem("python2", args),
  node: (args) => nodeProblem("node", args),
  nodejs: (args) => nodeProblem("nodejs", args),
  bun: (args) => bunProblem("bun", args),
  perl: interpreterRule(PERL),
  ruby: interpreterRule(RUBY),
  php: interpreterRule(PHP),
  lua: interpreterRule(LUA),
  Rscript: interpreterRule(RSCRIPT),
  sort: optionRule("sort", /^--compress-program/, "runs a program"),
  split: optionRule("split", /^--filter/, "runs a command"),
  tar: optionRule(
    "tar",
    /^--(to-command|checkpoint-action|use-compress-program|info-script|new-volume-script|rsh-command)|^-[a-zA-Z]*[IF]/,
    "runs a program",
  ),
  rsync: optionRule("rsync", /^(-e|--rsh|--rsync-path)|^-[a-zA-Z]*e/, "runs a program"),
  zip: optionRule("zip", /^(-T|-TT|--unzip-command)|^-[a-zA-Z]*TT/, "runs a program"),
  wget: optionRule("wget", /^--use-askpass/, "runs a program"),
  wait: optionRule("wait", /^-[a-zA-Z]*p/, "assigns a variable"),
  rg: optionRule("rg", /^--pre(=|$)/, "runs a program on every file searched"),
  ssh: sshRule("ssh", ""),
  scp: sshRule("scp", "S"),
  sftp: sshRule("sftp", "SD"),
  sqlite3: (args) => sqliteProblem("sqlite3", args),
  make: makeRule,
  gmake: makeRule,
};

/** A python3.12-style name uses the python rule. */
export function ruleFor(name: string): Rule | undefined {
  if (PROGRAM_RULES[name]) return PROGRAM_RULES[name];
  if (/^python[0-9.]*$/.test(name)) return (args) => pythonProblem(name, args);
  return /^(perl|ruby|php|lua)[0-9.]+$/.test(name) ? PROGRAM_RULES[name.replace(/[0-9.]+$/, "")] : undefined;
}

/**
 * Programs whose options run nothing and assign nothing: their arguments may hold
 * expansions and wildcards. Every other program gets written-out words only, since an
 * expansion could become an executing option.
 */
export const INERT_PROGRAMS: ReadonlySet<string> = new Set(
  "echo cd pwd true false cat ls head tail wc grep egrep fgrep cut tr uniq nl od xxd hexdump base64 md5sum sha1sum sha256sum sha512sum cksum stat file du df basename dirname realpath readlink mkdir rmdir touch cp mv rm ln chmod tee sleep yes seq date id whoami uname hostname diff cmp comm paste join fold fmt column rev tac expand unexpand truncate mkfifo kill jq gzip gunzip zcat bzip2 bunzip2 xz unxz unzip curl".split(
    " ",
  ),
);
