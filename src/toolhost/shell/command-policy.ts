/**
 * The shell allowlist. It is policy, not a boundary (the OS sandbox is what holds), but it
 * is checked properly: the command line is split into simple commands at every `;`,
 * `&&`, `||`, `|`, `&` and newline, honouring quotes, and each command's name must be on
 * the allowlist. Constructs that cannot be checked are refused: command and process
 * substitution, subshells and groups, variable or path-form command names, environment
 * prefixes, file redirections (file.write writes files), and wrappers that run their
 * arguments as commands.
 */
export type PolicyVerdict = { allowed: true; commands: string[] } | { allowed: false; reason: string };

/** Shell builtins that only move around or print: always allowed. */
export const SAFE_BUILTINS: ReadonlySet<string> = new Set(["cd", "pwd", "echo", "printf", "true", "false", "test", "["]);

/** Programs that run their arguments as a command: allowing them would void the list. */
const COMMAND_RUNNERS = new Set(["sh", "bash", "dash", "zsh", "ksh", "env", "xargs", "exec", "eval", "command", "builtin", "nohup", "setsid", "timeout", "nice", "sudo", "su", "chroot", "unshare", "nsenter", "busybox", "strace", "watch", "parallel", "script", "source", "."]);
/** Options of allowed programs that execute something else. */
const EXECUTING_OPTIONS: Record<string, RegExp> = {
  find: /^-(exec|execdir|ok|okdir)$/,
  git: /^(-c|--config-env|--exec-path|-C)$|^--(upload-pack|receive-pack)|^--config-env=/,
  rsync: /^(-e|--rsh)/,
  tar: /^--(to-command|checkpoint-action|use-compress-program)|^-I$/,
};
const SAFE_REDIRECT = /^(\d?>&\d|\d?>\s*\/dev\/null|&>\s*\/dev\/null|\d?>>\s*\/dev\/null)$/;

type Token = { word: string; operator?: false } | { word: string; operator: true };

export function checkCommand(line: string, allowed: ReadonlySet<string>): PolicyVerdict {
  if (line.includes("\0")) return { allowed: false, reason: "the command contains a NUL byte" };
  const tokens = tokenize(line);
  if ("error" in tokens) return { allowed: false, reason: tokens.error };
  const commands: string[] = [];
  let expectCommand = true;
  let current: string[] = [];
  const finish = (): PolicyVerdict | undefined => {
    if (current.length === 0) return undefined;
    const verdict = checkSimpleCommand(current, allowed);
    current = [];
    if (!verdict.allowed) return verdict;
    commands.push(...verdict.commands);
    return undefined;
  };
  for (const token of tokens.tokens) {
    if (token.operator) {
      if (token.word.includes(">") || token.word.includes("<")) {
        const verdict = checkRedirect(token.word);
        if (verdict) return verdict;
        continue;
      }
      if (expectCommand && current.length === 0) return { allowed: false, reason: `unexpected "${token.word}"` };
      const failed = finish();
      if (failed) return failed;
      expectCommand = true;
      continue;
    }
    current.push(token.word);
    expectCommand = false;
  }
  const failed = finish();
  if (failed) return failed;
  if (commands.length === 0) return { allowed: false, reason: "the command is empty" };
  return { allowed: true, commands };
}

function checkSimpleCommand(words: string[], allowed: ReadonlySet<string>): PolicyVerdict {
  const name = words[0] as string;
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(name)) return { allowed: false, reason: `environment prefixes (${name.split("=")[0]}=...) are not allowed` };
  if (name.includes("$")) return { allowed: false, reason: `a variable as command name (${name}) cannot be checked` };
  if (name.includes("/")) return { allowed: false, reason: `run commands by name, not by path (${name})` };
  if (COMMAND_RUNNERS.has(name)) return { allowed: false, reason: `${name} runs other commands and is never allowed` };
  if (!allowed.has(name) && !SAFE_BUILTINS.has(name)) return { allowed: false, reason: `${name} is not on ALLOWED_COMMANDS` };
  const executing = EXECUTING_OPTIONS[name];
  const bad = executing ? words.slice(1).find((word) => executing.test(word)) : undefined;
  if (bad) return { allowed: false, reason: `${name} ${bad} runs other commands and is not allowed` };
  return { allowed: true, commands: [name] };
}

function checkRedirect(operator: string): PolicyVerdict | undefined {
  return SAFE_REDIRECT.test(operator) ? undefined : { allowed: false, reason: `redirection "${operator}" is not allowed; use file.write to write files` };
}

/**
 * Splits a command line into words and operators. Redirections are returned as one
 * operator token including their target (`2>/dev/null`, `> out.txt`).
 */
function tokenize(line: string): { tokens: Token[] } | { error: string } {
  const tokens: Token[] = [];
  let word = "";
  let inWord = false;
  const push = () => {
    if (inWord) tokens.push({ word });
    word = "";
    inWord = false;
  };
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index] as string;
    const next = line[index + 1];
    if (char === "\\") {
      if (next === undefined) return { error: "the command ends with a backslash" };
      if (next !== "\n") word += next;
      inWord = true;
      index += 1;
    } else if (char === "'") {
      const end = line.indexOf("'", index + 1);
      if (end < 0) return { error: "unterminated single quote" };
      word += line.slice(index + 1, end);
      inWord = true;
      index = end;
    } else if (char === '"') {
      let end = index + 1;
      for (; end < line.length && line[end] !== '"'; end += 1) {
        if (line[end] === "\\") end += 1;
        else if (line[end] === "`" || (line[end] === "$" && line[end + 1] === "(")) return { error: "command substitution cannot be checked" };
      }
      if (end >= line.length) return { error: "unterminated double quote" };
      word += line.slice(index + 1, end).replace(/\\(["\\$`])/g, "$1");
      inWord = true;
      index = end;
    } else if (char === "`" || (char === "$" && next === "(")) {
      return { error: "command substitution cannot be checked" };
    } else if ((char === "<" || char === ">") && next === "(") {
      return { error: "process substitution cannot be checked" };
    } else if (char === "(" || char === ")" || char === "{" && /[\s;]/.test(line[index + 1] ?? " ") || char === "}" && !inWord) {
      return { error: "subshells and command groups cannot be checked" };
    } else if (char === "<" || char === ">" || (char === "&" && next === ">")) {
      // A redirection: an optional fd number already in `word`, the operator, its target.
      const fd = /^\d$/.test(word) ? word : "";
      if (fd) {
        word = "";
        inWord = false;
      } else push();
      let operator = fd;
      while (index < line.length && /[<>&]/.test(line[index] as string)) operator += line[index++] as string;
      while (index < line.length && line[index] === " ") index += 1;
      let target = "";
      while (index < line.length && !/[\s;&|<>]/.test(line[index] as string)) target += line[index++] as string;
      if (operator.endsWith("&") && /^\d$/.test(target)) {
        tokens.push({ word: `${operator}${target}`, operator: true });
      } else if (target.startsWith("-")) {
        return { error: `cannot read redirection "${operator}${target}"` };
      } else {
        if (target === "" && !operator.endsWith("&")) return { error: `redirection "${operator}" has no target` };
        tokens.push({ word: `${operator}${target}`, operator: true });
      }
      index -= 1;
    } else if (char === ";" || char === "\n" || char === "|" || char === "&") {
      push();
      let operator = char;
      if ((char === "|" || char === "&") && (next === char || (char === "|" && next === "&"))) {
        operator += next;
        index += 1;
      }
      tokens.push({ word: operator, operator: true });
    } else if (/\s/.test(char)) {
      push();
    } else if (char === "#" && !inWord) {
      break;
    } else {
      word += char;
      inWord = true;
    }
  }
  push();
  return { tokens };
}
