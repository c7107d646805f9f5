/**
 * The console in a real pseudo-terminal (python3's pty), as a person would use it: the
 * real CLI process, the real toolhost child, the loopback fake model.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { routeTo, startFakeOpenAI } from "../fakes/openai-server.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

type Step = { expect: string; timeout?: number } | { send: string };
type Drive = { ok: boolean; failed_step: number | null; exit_code: number | null; transcript: string };

async function driveChat(workspaceDir: string, env: Record<string, string>, steps: Step[]): Promise<Drive> {
  const spec = {
    argv: [process.execPath, "--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
    env: { PATH: process.env.PATH ?? "", TERM: "xterm", BOT_LOCALE: "en", LLM_MODEL: "fake", LLM_API_KEY: "sk-x", LLM_MAX_RETRIES: "0", TOOLHOST_SANDBOX: "none", ALLOWED_COMMANDS: "sleep,ls", ...env },
    cwd: REAL_REPO_ROOT,
    steps,
    exit_timeout: 20,
  };
  const { stdout } = await promisify(execFile)("python3", [join(REAL_REPO_ROOT, "test/fixtures/pty/drive.py"), JSON.stringify(spec)], { maxBuffer: 16 << 20 });
  return JSON.parse(stdout) as Drive;
}

describe("laoding chat in a real terminal", () => {
  it("Ctrl-C cancels the answer in progress and kills its command; Ctrl-C at the prompt quits; logs stay out of the conversation", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(routeTo([], "wait"), { toolCalls: [{ name: "shell_exec", arguments: { command: "sleep 53" } }] }, routeTo([], "greet"), { text: "Hello again." });
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(workspaceDir, { LLM_BASE_URL: fake.url, LOG_LEVEL: "info" }, [
        { expect: "you> ", timeout: 30 },
        { send: "wait for the sleep\r" },
        // The status line says what is running while the command sleeps.
        { expect: "running shell\\.exec", timeout: 15 },
        { send: "\x03" },
        { expect: "\\(Cancelled\\.\\)" },
        { expect: "you> " },
        // The bot still works after a cancel.
        { send: "hello\r" },
        { expect: "bot> Hello again\\." },
        { expect: "you> " },
        { send: "\x03" },
      ]);
      expect(run.failed_step, run.transcript).toBeNull();
      expect(run.exit_code, run.transcript).toBe(0);
      // No JSON log line, no stack trace in the conversation.
      expect(run.transcript).not.toMatch(/"level":|\n\s+at /);
      expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })).not.toMatch(/^sleep 53/m);
      // The logs went to the workspace's log file, with the cancelled turn in them.
      const logFile = join(workspaceDir, "data/logs/laoding.log");
      expect(existsSync(logFile)).toBe(true);
      expect(readFileSync(logFile, "utf8")).toMatch(/"msg":"turn cancelled"/);
    } finally {
      await fake.close();
    }
  });

  it("a second Ctrl-C while a cancel is under way quits at once", async () => {
    const fake = await startFakeOpenAI();
    try {
      // The model never answers in time; its HTTP call is what gets aborted.
      fake.respond(() => ({ text: "too late", delayMs: 30_000 }));
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(workspaceDir, { LLM_BASE_URL: fake.url, LLM_TIMEOUT_MS: "60000" }, [
        { expect: "you> ", timeout: 30 },
        { send: "hi\r" },
        { expect: "choosing skills" },
        { send: "\x03" },
        { send: "\x03" },
      ]);
      expect(run.failed_step, run.transcript).toBeNull();
      expect(run.exit_code, run.transcript).toBe(0);
      expect(run.transcript).not.toMatch(/too late/);
    } finally {
      await fake.close();
    }
  });

  it("a failing model is one line that says what to check; Ctrl-D quits", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.respond(() => ({ status: 401 }));
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(workspaceDir, { LLM_BASE_URL: fake.url, LOG_LEVEL: "warn" }, [
        { expect: "you> ", timeout: 30 },
        { send: "hi\r" },
        { expect: "bot> Sorry, the model service refused the bot's API key" },
        { expect: "you> " },
        { send: "\x04" },
      ]);
      expect(run.failed_step, run.transcript).toBeNull();
      expect(run.exit_code, run.transcript).toBe(0);
      // The error is announced in one line with where to read more, never as a stack.
      expect(run.transcript).toMatch(/error: model call failed \(details: laoding logs --trace tr-[0-9a-f]+\)/);
      expect(run.transcript).not.toMatch(/"level":|\n\s+at /);
    } finally {
      await fake.close();
    }
  });
});

describe("laoding chat under a supervisor (no terminal)", () => {
  it("SIGTERM lets the answer in progress finish within SHUTDOWN_GRACE_MS, then cancels it; the process ends", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.respond(() => ({ text: "too late", delayMs: 30_000 }));
      const workspaceDir = join(tempDir(), "rt");
      const child = spawn(process.execPath, ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir], {
        cwd: REAL_REPO_ROOT,
        env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", BOT_LOCALE: "en", LLM_BASE_URL: fake.url, LLM_MODEL: "fake", LLM_API_KEY: "sk-x", LLM_TIMEOUT_MS: "60000", TOOLHOST_SANDBOX: "none", SHUTDOWN_GRACE_MS: "300" },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.stdin.write("are you there?\n");
      // Signal once the model has been asked: the turn is in flight.
      while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill("SIGTERM");
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code, stderr).toBe(0);
      expect(stdout).toBe("(Cancelled.)\n");
      expect(stderr).toMatch(/"msg":"shutting down; turns in flight may finish"/);
      expect(stderr).toMatch(/"msg":"grace period over: cancelling the turns in flight"/);
      expect(stderr).toMatch(/"msg":"stopped"/);
    } finally {
      await fake.close();
    }
  });
});
