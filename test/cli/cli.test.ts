import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runLaoding } from "../helpers/cli.js";
import { REAL_REPO_ROOT, fakeRepo, tempDir } from "../helpers/temp-dir.js";

describe("laoding CLI exit codes", () => {
  it("prints usage and exits 2 for no command, an unknown command or a bad flag", async () => {
    const repoRoot = fakeRepo();
    const none = await runLaoding([], { repoRoot });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Usage: laoding <command>");
    const unknown = await runLaoding(["frobnicate"], { repoRoot });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badFlag = await runLaoding(["init", "--wrokspace", "x"], { repoRoot });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/Unknown option '--wrokspace'[\s\S]*Usage: laoding init/);
  });

  it("--help of every command exits 0 with its usage", async () => {
    const repoRoot = fakeRepo();
    for (const command of ["init", "start", "chat", "config", "skills", "toolhost"]) {
      const run = await runLaoding([command, "--help"], { repoRoot });
      expect(run.code, command).toBe(0);
      expect(run.stdout + run.stderr).toContain(`Usage: laoding ${command}`);
    }
    expect((await runLaoding(["--help"], { repoRoot })).code).toBe(0);
  });

  it("an operational failure exits 1 with one clear line and no stack", async () => {
    const repoRoot = fakeRepo({ env: "" });
    const workspaceDir = tempDir();
    const run = await runLaoding(["config", "--workspace", workspaceDir], { repoRoot });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^laoding config: invalid configuration:\n {2}- REACT_MAX_STEPS is not set/);
    expect(run.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it("config shows each value's source and masks secrets", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = tempDir();
    await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    const run = await runLaoding(["config", "--workspace", workspaceDir], {
      repoRoot,
      env: { LLM_API_KEY: "sk-very-secret-key-123", TELEGRAM_BOT_TOKEN: "12345:ABCDEFsecret", LLM_MODEL: "qwen-max" },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("sk-very-secret-key-123");
    expect(run.stdout).not.toContain("ABCDEFsecret");
    expect(run.stdout).toMatch(/LLM_API_KEY +sk\*\*\*\*23 +\[the environment\]/);
    expect(run.stdout).toMatch(new RegExp(`REACT_MAX_STEPS +8 +\\[${join(workspaceDir, "configs", "env")}\\]`));
    expect(run.stdout).toMatch(/LLM_MODEL +qwen-max +\[the environment\]/);
    expect(run.stdout).toMatch(/CONTEXT_CHAR_BUDGET +12000 +\[the built-in default\]/);
    // The effective allowlist is the operator's list exactly: nothing (node, curl) is added behind their back.
    const allowlist = await runLaoding(["config", "--workspace", workspaceDir], {
      repoRoot,
      env: { ALLOWED_COMMANDS: "ls,cat" },
    });
    expect(allowlist.stdout).toMatch(/^effective ALLOWED_COMMANDS: ls,cat$/m);
    const json = JSON.parse(
      (
        await runLaoding(["config", "--json", "--workspace", workspaceDir], {
          repoRoot,
          env: { LLM_API_KEY: "sk-very-secret-key-123" },
        })
      ).stdout,
    );
    expect(json.variables.find((row: { name: string }) => row.name === "LLM_API_KEY").value).toBe("sk****23");
  });
});

describe("laoding start (real process)", () => {
  it("seeds the workspace, prints a ready line, and exits 0 on SIGINT", async () => {
    const workspaceDir = join(tempDir(), "rt");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "start", "--workspace", workspaceDir],
      {
        cwd: REAL_REPO_ROOT,
        env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info" },
        // Stdin stays open: the console channel would otherwise end at end of input.
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    const ready = new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (stderr.includes("LaodingBot ready")) resolve();
      });
      child.on("exit", () => reject(new Error(`exited before ready:\n${stderr}`)));
    });
    await ready;
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    const lines = stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string });
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        "workspace seeded",
        "LaodingBot ready; press Ctrl-C to stop",
        "shutting down; turns in flight may finish",
        "stopped",
      ]),
    );
    expect(lines.find((line) => line.msg.startsWith("LaodingBot ready"))).toMatchObject({
      channel: "console",
      agent: "main",
      model: null,
    });
  });
});

describe("laoding chat (real process, scripted)", () => {
  it("reads one message per line, prints each reply and exits at end of input", async () => {
    const workspaceDir = join(tempDir(), "rt");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
      {
        cwd: REAL_REPO_ROOT,
        env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent", BOT_LOCALE: "en" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stdin.end("/help\n\nhello there\n/new\n");
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    const replies = stdout.trim().split("\n");
    expect(replies[0]).toBe("I'm Laoding. Tell me what you need and I'll use my skills and tools to get it done.");
    expect(stdout).toMatch(/No model is configured yet/);
    expect(replies.at(-1)).toBe("Done: a fresh conversation. I won't use what was said before.");
  });
});

describe("laoding skills", () => {
  it("lists the catalog and validates it, naming invalid files", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = tempDir();
    await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    const list = await runLaoding(["skills", "list", "--workspace", workspaceDir], { repoRoot });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/agent main: 1 skills\n {2}skill-builder +active +seed +base/);
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(join(workspaceDir, "skills", "Bad_Name"), { recursive: true });
    writeFileSync(
      join(workspaceDir, "skills", "Bad_Name", "SKILL.md"),
      "---\nname: Bad_Name\ndescription: x\n---\nbody",
    );
    const validate = await runLaoding(["skills", "validate", "--workspace", workspaceDir], { repoRoot });
    expect(validate.code).toBe(1);
    expect(validate.stdout).toMatch(
      /INVALID .*skills\/Bad_Name\/SKILL\.md: name must be lowercase letters, digits and single hyphens/,
    );
    expect((await runLaoding(["skills", "frob", "--workspace", workspaceDir], { repoRoot })).code).toBe(2);
  });
});

describe("sandbox preflight", () => {
  it("TOOLHOST_SANDBOX=bwrap without bubblewrap stops start-up naming the reason; auto falls back and says so on the console", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    const env = { TOOLHOST_BWRAP_PATH: "/nonexistent/bwrap" };
    const strict = await runLaoding(["chat", "--workspace", workspaceDir], {
      repoRoot,
      env: { ...env, TOOLHOST_SANDBOX: "bwrap" },
    });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(
      /TOOLHOST_SANDBOX=bwrap but agent main's sandbox cannot start: \/nonexistent\/bwrap is not installed\. Install bubblewrap/,
    );
    const lenient = await runLaoding(["chat", "--workspace", workspaceDir], {
      repoRoot,
      env: { ...env, TOOLHOST_SANDBOX: "auto" },
    });
    expect(lenient.code).toBe(0);
    // Said on the console whatever the log level (the helper runs with LOG_LEVEL=silent).
    // As root, only because the operator at this terminal is the bot's only user (docs/isolation.md).
    expect(lenient.stderr).toMatch(
      process.getuid?.() === 0
        ? /warning: agent main: bubblewrap is not usable \(\/nonexistent\/bwrap is not installed\); only the operator at this terminal uses the bot, so the agent runs apart by its uid only/
        : /warning: agent main: bubblewrap is not usable \(\/nonexistent\/bwrap is not installed\); shell commands run WITHOUT the OS sandbox/,
    );
  });

  // As root the agents run as their own uids, which cannot pass a 0700 folder such as /root.
  it.runIf(process.getuid?.() === 0)(
    "a workspace under a mode-700 folder works in every mode; without bubblewrap none refuses and none-unsafe says what to change",
    async () => {
      const { chmodSync } = await import("node:fs");
      const repoRoot = fakeRepo();
      const closed = tempDir();
      chmodSync(closed, 0o700);
      const workspaceDir = join(closed, "rt");
      for (const mode of ["bwrap", "auto", "none"]) {
        const run = await runLaoding(["chat", "--workspace", workspaceDir], {
          repoRoot,
          env: { TOOLHOST_SANDBOX: mode },
        });
        expect(run.code, `${mode}: ${run.stderr}`).toBe(0);
        expect(run.stderr, mode).not.toMatch(/warning/);
      }
      // none as root never runs without its namespaces; none-unsafe then names the closed folder.
      const refused = await runLaoding(["chat", "--workspace", workspaceDir], {
        repoRoot,
        env: { TOOLHOST_SANDBOX: "none", TOOLHOST_BWRAP_PATH: "/nonexistent/bwrap" },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /cannot get its own mount, pid and network namespaces \(\/nonexistent\/bwrap is not installed\).*TOOLHOST_SANDBOX=none-unsafe/,
      );
      const stuck = await runLaoding(["chat", "--workspace", workspaceDir], {
        repoRoot,
        env: { TOOLHOST_SANDBOX: "none-unsafe", TOOLHOST_BWRAP_PATH: "/nonexistent/bwrap" },
      });
      expect(stuck.code).toBe(1);
      expect(stuck.stderr).toMatch(
        /agent main's uid \d+ cannot reach its folders \(uid \d+ cannot enter or write .*\) and bubblewrap, which would bind them, cannot run .* move the workspace out of a private folder .*, or let the agents pass through (\/\S+) \(chmod o\+x \1\)$/m,
      );
    },
  );
});

describe("laoding chat with a model (real process, loopback fake)", () => {
  it("answers through the real toolhost child and records the tool call", async () => {
    const { startFakeOpenAI, routeTo } = await import("../fakes/openai-server.js");
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(
        routeTo([], "say-hello"),
        { toolCalls: [{ name: "shell_exec", arguments: { command: "echo hello from the sandbox" } }] },
        { text: "The shell said hello." },
      );
      const workspaceDir = join(tempDir(), "rt");
      const child = spawn(
        process.execPath,
        ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
        {
          cwd: REAL_REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? "",
            LOG_LEVEL: "silent",
            BOT_LOCALE: "en",
            LLM_BASE_URL: fake.url,
            LLM_MODEL: "fake",
            LLM_API_KEY: "sk-x",
            LLM_MAX_RETRIES: "0",
            TOOLHOST_SANDBOX: "auto",
          },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stdin.end("say hello using the shell\n");
      expect(await new Promise<number | null>((resolve) => child.on("exit", resolve))).toBe(0);
      expect(stdout).toBe("The shell said hello.\n");
      expect(fake.requests[2]?.messages.at(-1)).toMatchObject({ role: "tool", content: "hello from the sandbox\n" });
      const { openStore } = await import("../../src/store/store.js");
      const store = await openStore(join(workspaceDir, "data", "laoding.db"), { now: () => Date.now() });
      expect(await store.sql.all("SELECT tool, ok FROM tool_calls")).toEqual([{ tool: "shell.exec", ok: 1 }]);
      await store.close();
    } finally {
      await fake.close();
    }
  });
});
