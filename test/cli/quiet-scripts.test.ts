/**
 * Scripts read only results on stdout (issue 24 item 7), with real processes: piped chat,
 * `library list` for every agent, `logs --trace` that matches nothing, and a configuration
 * error said once with the line of agents.json it is on. LOG_LEVEL is not in the
 * environment, so logs go to the workspace's log file, not to stderr.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

type Run = { code: number | null; stdout: string; stderr: string };

/** The real CLI in its own process, stdin from `input`, without LOG_LEVEL in its environment. */
function laoding(args: string[], input = "", env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), ...args], {
    cwd: REAL_REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", BOT_LOCALE: "en", TOOLHOST_SANDBOX: "none", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

const HELP_EN = [
  "I'm Laoding. Tell me what you need and I'll use my skills and tools to get it done.",
  "",
  "Commands:",
  "/help show this help",
  "/start introduce myself",
  "/new start a fresh conversation",
  "/context show the prompt sections of the last turn",
];

describe("quiet scripts", () => {
  it("printf '/help\\n' | laoding chat prints only the help on stdout and nothing on stderr; the logs are in the file", async () => {
    const workspace = join(tempDir(), "ws");
    const run = await laoding(["chat", "--workspace", workspace], "/help\n");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // The help, then the operator block (the console user is an operator), and nothing else.
    const lines = run.stdout.split("\n");
    expect(lines.slice(0, HELP_EN.length)).toEqual(HELP_EN);
    expect(run.stdout).toMatch(/\n\nOperator commands:\n\/capability_gaps [^\n]+\n\/reload_skills [^\n]+\n/);
    expect(run.stdout).not.toMatch(/LaodingBot ready|"level"/);
    expect(readFileSync(join(workspace, "data", "logs", "laoding.log"), "utf8")).toContain("LaodingBot ready");
  });

  it("LOG_LEVEL in the environment asks for the JSON logs on stderr", async () => {
    const workspace = join(tempDir(), "ws");
    const run = await laoding(["chat", "--workspace", workspace], "/help\n", { LOG_LEVEL: "info" });
    expect(run.code).toBe(0);
    expect(
      run.stderr
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { msg: string }).msg),
    ).toContain("LaodingBot ready; press Ctrl-C to stop");
    expect(run.stdout.split("\n").slice(0, HELP_EN.length)).toEqual(HELP_EN);
  });

  it("the console user runs /capability_gaps and /reload_skills", async () => {
    const workspace = join(tempDir(), "ws");
    const run = await laoding(["chat", "--workspace", workspace], "/capability_gaps\n/reload_skills\n");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/operators only/);
    expect(run.stdout).toMatch(/capability gaps/i);
    expect(run.stdout).toMatch(/Skills reloaded|Nothing changed/);
  });

  it("laoding library list without an agent lists every agent's library, and only that", async () => {
    const workspace = join(tempDir(), "ws");
    expect((await laoding(["init", "--workspace", workspace])).code).toBe(0);
    const agentsFile = join(workspace, "configs", "agents.json");
    writeFileSync(
      agentsFile,
      JSON.stringify(
        {
          agents: [
            { id: "main", name: "Main" },
            { id: "ops", name: "Ops" },
          ],
        },
        null,
        2,
      ),
    );
    const run = await laoding(["library", "list", "--workspace", workspace]);
    expect(run.code).toBe(0);
    // The toolhost children's own log lines go to the log file too.
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(
      `main  0 document(s) in ${join(workspace, "share", "agent-experience", "main")}\nops  0 document(s) in ${join(workspace, "share", "agent-experience", "ops")}\n`,
    );
  });

  it("laoding logs --trace with an id no line has says so and exits 1", async () => {
    const workspace = join(tempDir(), "ws");
    expect((await laoding(["chat", "--workspace", workspace], "/help\n")).code).toBe(0);
    const run = await laoding(["logs", "--trace", "nope", "--workspace", workspace]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`no log line has trace id nope (in ${join(workspace, "data", "logs")})\n`);
  });

  it("a configuration error is printed once, at agents.json:line:column, every entry's problem at once", async () => {
    const workspace = join(tempDir(), "ws");
    expect((await laoding(["init", "--workspace", workspace])).code).toBe(0);
    const agentsFile = join(workspace, "configs", "agents.json");
    writeFileSync(
      agentsFile,
      '{\n  "agents": [\n    { "id": "main", "name": "Main",\n      "bogus": 1 },\n    { "id": "Ops", "name": "Ops" }\n  ]\n}\n',
    );
    const run = await laoding(["start", "--workspace", workspace]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.match(/bogus/g)).toHaveLength(1);
    expect(run.stderr).toContain(`${agentsFile}:4:7: agents[0] (id "main"): unknown field \`bogus\``);
    expect(run.stderr).toContain(`${agentsFile}:5:7: agents[1] (id "Ops"): \`id\`: must match`);
    writeFileSync(agentsFile, '{\n  "agents": [\n    { "id": "main", "name": "Main", }\n  ]\n}\n');
    const broken = await laoding(["library", "list", "--workspace", workspace]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(
      new RegExp(`^laoding library: ${agentsFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:37: not valid JSON: `),
    );
    expect(broken.stderr.split("\n").filter((line) => line.includes("not valid JSON"))).toHaveLength(1);
  });
});
