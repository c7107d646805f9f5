/**
 * The shell allowlist. It is a first line, not the boundary: the OS sandbox is what
 * holds (docs/command-allowlist.md). It reads the line as bash does where it matters
 * (shell-words.ts) and checks every simple command of every list and pipeline:
 * - the name must be written out (no expansion, no path) and be on ALLOWED_COMMANDS or
 *   a harmless builtin;
 * - assignments, builtins that assign or evaluate, shell keywords, and programs that
 *   run their arguments as a command are refused, whatever the allowlist says;
 * - wrappers (`command`, `builtin`, `nohup`, `timeout`, `nice`, `stdbuf`) have their
 *   target checked as a command of its own;
 * - per-program rules refuse executing forms (program-rules.ts);
 * - only programs whose options run nothing take expanded words (`$X`, `*`, `{a,b}`);
 * - redirections only to /dev/null or between descriptors (file.write writes files).
 */
import { INERT_PROGRAMS, ruleFor } from "./program-rules.js";
import { lexShell, type ShellToken, type Word } from "./shell-words.js";

export type PolicyVerdict = { allowed: true; commands: string[] } | { allowed: false; reason: string };

/** Shell builtins that only move around or print: always allowed. */
export const SAFE_BUILTINS: ReadonlySet<string> = new Set([
  "cd",
  "pwd",
  "echo",
  "printf",
  "true",
  "false",
  "test",
  "[",
]);

/** Builtins that assign variables, evaluate strings or change how later commands resolve. */
const ASSIGNING_BUILTINS = new Set(
  "declare typeset local read mapfile readarray export readonly unset let eval source . alias unalias set shopt trap hash enable getopts bind complete compgen compopt fc history".split(
    " ",
  ),
);
/** Keywords: loops assign (`for PATH in ...`), `[[`/`((` evaluate subscripts, the rest hide commands. */
const KEYWORDS = new Set(
  "if then else elif fi case esac for select while until do done function time coproc [[ ]] (( ! in".split(" "),
);
/** Programs and builtins that run their arguments (or stdin, or a file) as commands. */
const COMMAND_RUNNERS = new Set(
  "sh bash dash zsh ksh mksh fish csh tcsh rbash xargs exec setsid sudo su doas runuser setpriv chroot unshare nsenter busybox strace ltrace gdb watch parallel script flock ionice chrt taskset firejail systemd-run vi vim nvim ex ed emacs less more man".split(
    " ",
  ),
);
/** Wrappers that run the command given in their arguments, checked like any command. */
const WRAPPERS: Record<string, (args: Word[]) => { target: Word[] } | { problem: string } | undefined> = {
  command: (args) => {
    let index = 0;
    for (; index < args.length && args[index]?.text.startsWith("-"); index += 1) {
      if (/[vV]/.test(args[index]?.text ?? "")) return undefined; // command -v NAME: a lookup
    }
    return { target: args.slice(index) };
  },
  builtin: (args) => ({ target: args }),
  nohup: (args) => ({ target: args }),
  timeout: (args) => skipOptions(args, /^-(s|k)$|^--(signal|kill-after)$/, 1),
  nice: (args) => skipOptions(args, /^-n$|^--adjustment$/, 0),
  stdbuf: (args) => skipOptions(args, /^-[ioe]$/, 0),
  // npx (and `npm exec`) run any program on PATH, not only packages' programs.
  npx: packageRunner,
  npm: (args) => (/^(exec|x)$/.test(args[0]?.text ?? "") ? packageRunner(args.slice(1)) : undefined),
};

function packageRunner(args: Word[]): { target: Word[] } | { problem: string } {
  const unwrapped = skipOptions(args, /^(-p|--package)$/, 0);
  const own = "target" in unwrapped ? args.slice(0, args.length - unwrapped.target.length) : [];
  const call = own.find(({ text }) => /^(-c|--call)(=|$)/.test(text));
  return call ? { problem: `${call.text} runs a shell command line` } : unwrapped;
}

/** Skips a wrapper's options (those matching `withValue` take the next word) and `positional` leading operands. */
function skipOptions(args: Word[], withValue: RegExp, positional: number): { target: Word[] } | { problem: string } {
  let index = 0;
  for (; index < args.length && args[index]?.text.startsWith("-") && args[index]?.text !== "--"; index += 1) {
    if (args[index]?.dynamic) return { problem: "a wrapper's options must be written out" };
    if (withValue.test(args[index]?.text ?? "")) index += 1;
  }
  if (args[index]?.text === "--") index += 1;
  return { target: args.slice(index + positional) };
}

const SAFE_REDIRECT =
  /^(\d?>&\d|\d?>&-|\d?>\s*\/dev\/null|&>\s*\/dev\/null|\d?>>\s*\/dev\/null|&>>\s*\/dev\/null|\d?<\s*\/dev\/null)$/;

export function checkCommand(line: string, allowed: ReadonlySet<string>): PolicyVerdict {
  if (line.includes("\0")) return { allowed: false, reason: "the command contains a NUL byte" };
  const lexed = lexShell(line);
  if ("error" in lexed) return { allowed: false, reason: lexed.error };
  const commands: string[] = [];
  let current: Word[] = [];
  const finish = (): string | undefined => {
    if (current.length === 0) return undefined;
    const verdict = checkSimpleCommand(current, allowed, 0);
    current = [];
    if (!verdict.allowed) return verdict.reason;
    commands.push(...verdict.commands);
    return undefined;
  };
  for (const token of lexed.tokens) {
    const problem = consume(token);
    if (problem) return { allowed: false, reason: problem };
  }
  const failed = finish();
  if (failed) return { allowed: false, reason: failed };
  if (commands.length === 0) return { allowed: false, reason: "the command is empty" };
  return { allowed: true, commands };

  function consume(token: ShellToken): string | undefined {
    if (token.kind === "word") {
      current.push(token);
      return undefined;
    }
    if (token.kind === "redirect")
      return SAFE_REDIRECT.test(token.text)
        ? undefined
        : `redirection "${token.text}" is not allowed; use file.write to write files`;
    if (token.text === ";;" || token.text === ";&") return `unexpected "${token.text}"`;
    if (current.length === 0 && token.text !== "\n") return `unexpected "${token.text.replace("\n", "newline")}"`;
    return finish();
  }
}

function checkSimpleCommand(words: Word[], allowed: ReadonlySet<string>, depth: number): PolicyVerdict {
  const refuse = (reason: string): PolicyVerdict => ({ allowed: false, reason });
  const [nameWord, ...args] = words as [Word, ...Word[]];
  const name = nameWord.text;
  // `a=1`, `PATH+=x`, `a[$(id)]=1`: bash reads these before quote removal.
  if (/^[A-Za-z_][A-Za-z0-9_]*(\[|\+?=)/.test(nameWord.raw))
    return refuse(`assignments (${nameWord.raw.split(/[[+=]/)[0]}=...) are not allowed`);
  if (nameWord.dynamic) return refuse(`a command name must be written out (${nameWord.raw} is expanded by bash)`);
  if (name.includes("/")) return refuse(`run commands by name, not by path (${name})`);
  if (KEYWORDS.has(name))
    return refuse(`the shell keyword ${name} cannot be checked (loops assign variables, [[ and (( evaluate)`);
  if (ASSIGNING_BUILTINS.has(name)) return refuse(`${name} assigns variables or evaluates code and is never allowed`);
  if (COMMAND_RUNNERS.has(name)) return refuse(`${name} runs other commands and is never allowed`);
  const builtin = SAFE_BUILTINS.has(name) || name === "command" || name === "builtin";
  if (!builtin && !allowed.has(name)) return refuse(`${name} is not on ALLOWED_COMMANDS`);
  if (name === "builtin" && args[0] && !SAFE_BUILTINS.has(args[0].text))
    return refuse(`builtin ${args[0].text}: only ${[...SAFE_BUILTINS].join(", ")} may be run this way`);
  const wrapper = WRAPPERS[name];
  if (wrapper) {
    const unwrapped = wrapper(args);
    if (unwrapped === undefined) return { allowed: true, commands: [name] };
    if ("problem" in unwrapped) return refuse(`${name}: ${unwrapped.problem}`);
    if (unwrapped.target.length === 0) return { allowed: true, commands: [name] };
    if (depth > 4) return refuse("too many wrappers in a row");
    const inner = checkSimpleCommand(unwrapped.target, allowed, depth + 1);
    return inner.allowed ? { allowed: true, commands: [name, ...inner.commands] } : inner;
  }
  const rule = ruleFor(name);
  const problem = rule?.(args);
  if (problem) return refuse(problem);
  if (!INERT_PROGRAMS.has(name) && name !== "printf") {
    const dynamic = args.find((word) => word.dynamic);
    if (dynamic)
      return refuse(
        `${name} takes written-out words only: ${dynamic.raw} is expanded by bash and could become an option; quote it or spell it out`,
      );
  }
  return { allowed: true, commands: [name] };
}
