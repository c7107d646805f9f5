/**
 * git is an interpreter in disguise: configuration names programs it runs (aliases with
 * `!`, core.pager, core.fsmonitor, core.sshCommand, diff.external, filters, credential
 * helpers...), and several options take a program. The allowlist refuses the forms that
 * put such code on the command line: `-c`, `--config-env`, `--exec-path`, `-C`,
 * `-p`/`--paginate`, aliases (a subcommand git does not ship), program options
 * (`--upload-pack`/`-u` of clone/fetch/pull/ls-remote, `--receive-pack`, `--exec`,
 * `rebase -x`, `difftool -x`, `bisect run`, `submodule foreach`, `grep -O`) and
 * `git config` writes except a few harmless keys.
 *
 * Hook-running subcommands (commit, merge, checkout...) stay allowed: a hook is a file
 * in the agent's own repository, which it can write with file.write anyway, and it runs
 * inside the OS sandbox as the agent, exactly like `python3 script.py` would. For the
 * same reason a repository config the agent wrote itself is not policed: the OS sandbox
 * is the boundary (docs/command-allowlist.md).
 */
import type { Word } from "./shell-words.js";

const SUBCOMMANDS = new Set(
  "add am annotate apply archive bisect blame branch bundle checkout cherry cherry-pick clean clone commit config count-objects describe diff diff-files diff-index diff-tree fetch for-each-ref format-patch fsck gc grep help init log ls-files ls-remote ls-tree merge merge-base mv name-rev notes pull push range-diff rebase reflog remote reset restore rev-list rev-parse revert rm shortlog show show-branch show-ref sparse-checkout stash status submodule switch tag verify-commit verify-tag version whatchanged worktree cat-file check-ignore hash-object mktree read-tree symbolic-ref update-index update-ref write-tree".split(
    " ",
  ),
);
/** Global options that take a value as the next word. */
const GLOBAL_WITH_VALUE = new Set(["--git-dir", "--work-tree", "--namespace"]);
const REFUSED_GLOBAL = /^(-c|-C|-p|--paginate|--exec-path|--config-env|--list-cmds)(=|$)/;
/** Keys `git config` may set: identity and cosmetics, none of which names a program. */
const SETTABLE_KEYS =
  /^(user\.(name|email)|init\.defaultbranch|color\.[a-z.]+|pull\.rebase|push\.default|advice\.[a-z]+|commit\.gpgsign|tag\.gpgsign)$/i;
const CONFIG_READS = new Set(["--get", "--get-all", "--get-regexp", "-l", "--list", "get", "list"]);

export function gitProblem(args: Word[]): string | undefined {
  let index = 0;
  for (; index < args.length; index += 1) {
    const word = (args[index] as Word).text;
    if (!word.startsWith("-")) break;
    if (REFUSED_GLOBAL.test(word)) return `git ${word} can run other programs or change git's configuration`;
    if (GLOBAL_WITH_VALUE.has(word)) index += 1;
  }
  const subcommand = args[index]?.text;
  if (subcommand === undefined) return undefined;
  if (!SUBCOMMANDS.has(subcommand))
    return `git ${subcommand} is not a git command this allowlist knows (an alias may run anything)`;
  const rest = args.slice(index + 1).map((word) => word.text);
  const program = rest.find((word) =>
    /^--(upload-pack|receive-pack|exec|extcmd|open-files-in-pager|tool|ext-diff|textconv)(=|$)/.test(word),
  );
  if (program) return `git ${subcommand} ${program} runs another program`;
  if (
    ["clone", "fetch", "pull", "ls-remote", "archive"].includes(subcommand) &&
    rest.some((word) => /^-[a-zA-Z]*u/.test(word) && !word.startsWith("--"))
  ) {
    return `git ${subcommand} -u names the program run as upload-pack`;
  }
  if (
    (subcommand === "rebase" || subcommand === "difftool") &&
    rest.some((word) => /^-[a-zA-Z]*x/.test(word) && !word.startsWith("--"))
  )
    return `git ${subcommand} -x runs a command`;
  if (subcommand === "grep" && rest.some((word) => /^-[a-zA-Z]*O/.test(word) && !word.startsWith("--")))
    return "git grep -O runs a pager";
  if (subcommand === "bisect" && rest[0] === "run") return "git bisect run runs a command";
  if (subcommand === "submodule" && rest.includes("foreach")) return "git submodule foreach runs a command";
  if (subcommand === "config") return gitConfigProblem(rest);
  return undefined;
}

function gitConfigProblem(rest: string[]): string | undefined {
  if (rest.some((word) => CONFIG_READS.has(word))) return undefined;
  const words = rest.filter((word) => !word.startsWith("-") && word !== "set" && word !== "unset");
  const key = words[0];
  if (key === undefined) return undefined;
  // One word: a read of that key. Two or more: a write.
  if (
    words.length === 1 &&
    !rest.some(
      (word) =>
        /^--(add|replace-all|unset|unset-all|rename-section|remove-section|edit|file)/.test(word) ||
        word === "set" ||
        word === "unset" ||
        word === "-e",
    )
  )
    return undefined;
  if (!SETTABLE_KEYS.test(key))
    return `git config may set only user.name, user.email, init.defaultBranch, color.* and a few others, not ${key} (core.*, alias.* and many other keys name programs git runs)`;
  return undefined;
}
