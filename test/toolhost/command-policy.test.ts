import { describe, expect, it } from "vitest";
import { checkCommand } from "../../src/toolhost/shell/command-policy.js";

const allowed = new Set(["ls", "cat", "grep", "echo", "find", "git", "wc", "sort"]);

describe("shell allowlist", () => {
  it.each([
    ["ls -la", ["ls"]],
    ["cat a.txt | grep -n foo | wc -l", ["cat", "grep", "wc"]],
    ["ls && echo ok || echo failed; sort x", ["ls", "echo", "echo", "sort"]],
    ["echo 'a; rm -rf /' \"$(not run)\"".replace('"$(not run)"', "'$(quoted)'"), ["echo"]],
    ["grep -r foo . 2>/dev/null", ["grep"]],
    ["ls 2>&1 | wc -l", ["ls", "wc"]],
    ["echo {a,b}.txt", ["echo"]],
    ["find . -name '*.md'", ["find"]],
    ["git log --oneline # a comment; rm -rf /", ["git"]],
    ["cd sub && pwd && test -f x && printf '%s' ok", ["cd", "pwd", "test", "printf"]],
  ])("allows %s", (line, commands) => {
    expect(checkCommand(line, allowed)).toEqual({ allowed: true, commands });
  });

  it.each([
    ["rm -rf /", /rm is not on ALLOWED_COMMANDS/],
    ["ls; rm x", /rm is not on/],
    ["ls | sh", /sh runs other commands/],
    ["echo $(cat /etc/shadow)", /command substitution/],
    ["echo `id`", /command substitution/],
    ['echo "$(id)"', /command substitution/],
    ["cat <(ls)", /process substitution/],
    ["(cat x)", /subshells/],
    ["{ ls; }", /subshells/],
    ["FOO=1 ls", /environment prefixes/],
    ["$CMD x", /variable as command name/],
    ["/tmp/ls", /by name, not by path/],
    ["./script.sh", /by name, not by path/],
    ["env cat x", /env runs other commands/],
    ["xargs rm", /xargs runs other commands/],
    ["find . -exec rm {} +", /find -exec runs other commands/],
    ["git -c core.pager=sh log", /git -c runs other commands/],
    ["echo x > file.txt", /redirection ">file.txt" is not allowed/],
    ["cat < /etc/shadow", /redirection/],
    ["echo 'unterminated", /unterminated single quote/],
    ["", /empty/],
    ["ls ;; ls", /unexpected/],
    ["ls\0", /NUL/],
  ])("refuses %s", (line, reason) => {
    const verdict = checkCommand(line, allowed);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) expect(verdict.reason).toMatch(reason);
  });
});
