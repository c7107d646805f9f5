/**
 * The console in a real pseudo-terminal (python3's pty), as a person would use it: the
 * real CLI process, the real toolhost child, the loopback fake model.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { Writable } from "node:stream";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createStatusLine } from "../../src/channels/console-status.js";
import { routeTo, startFakeOpenAI } from "../fakes/openai-server.js";
import { englishRun } from "../helpers/english-run.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { terminalScreen } from "../helpers/terminal-screen.js";

type Step = { expect: string; timeout?: number } | { send: string };
type Drive = { ok: boolean; failed_step: number | null; exit_code: number | null; transcript: string };

/** `columns`: the terminal's width, set with stty before the CLI starts (as a resized window would). */
async function driveChat(
  workspaceDir: string,
  env: Record<string, string>,
  steps: Step[],
  columns?: number,
): Promise<Drive> {
  const cli = [
    process.execPath,
    "--import",
    "tsx",
    join(REAL_REPO_ROOT, "src/cli/main.ts"),
    "chat",
    "--workspace",
    workspaceDir,
  ];
  const spec = {
    argv: columns === undefined ? cli : ["sh", "-c", `stty cols ${columns} rows 40 && exec "$@"`, "sh", ...cli],
    env: {
      PATH: process.env.PATH ?? "",
      TERM: "xterm",
      BOT_LOCALE: "en",
      LLM_MODEL: "fake",
      LLM_API_KEY: "sk-x",
      LLM_MAX_RETRIES: "0",
      TOOLHOST_SANDBOX: "none",
      ALLOWED_COMMANDS: "sleep,ls",
      ...env,
    },
    cwd: REAL_REPO_ROOT,
    steps,
    exit_timeout: 20,
  };
  const { stdout } = await promisify(execFile)(
    "python3",
    [join(REAL_REPO_ROOT, "test/fixtures/pty/drive.py"), JSON.stringify(spec)],
    { maxBuffer: 16 << 20 },
  );
  return JSON.parse(stdout) as Drive;
}

describe("laoding chat in a real terminal", () => {
  it("Ctrl-C cancels the answer in progress and kills its command; Ctrl-C at the prompt quits; logs stay out of the conversation", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue(
        routeTo([], "wait"),
        { toolCalls: [{ name: "shell_exec", arguments: { command: "sleep 53" } }] },
        routeTo([], "greet"),
        { text: "Hello again." },
      );
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
  }, 60_000);

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
  }, 60_000);

  it("/feedback never shows the chat user an internal warning (a distiller that answers nonsense is the operator's business)", async () => {
    const fake = await startFakeOpenAI();
    try {
      // A turn routed and answered; then every request (the distiller's) gets text that is not the JSON it asks for.
      fake.enqueue(routeTo([], "greeting"), { text: "nonsense, not JSON" });
      fake.respond(() => ({ text: "nonsense, not JSON" }));
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(workspaceDir, { LLM_BASE_URL: fake.url }, [
        { expect: "you> ", timeout: 30 },
        { send: "hello\r" },
        { expect: "bot> nonsense, not JSON" },
        { expect: "you> " },
        { send: "/feedback bad that was wrong\r" },
        { expect: "bot> " },
        { expect: "you> " },
        { send: "\x04" },
      ]);
      expect(run.failed_step, run.transcript).toBeNull();
      expect(fake.requests.length, "the distiller was asked").toBeGreaterThanOrEqual(3);
      expect(run.transcript).not.toMatch(/warning|distillation failed/i);
    } finally {
      await fake.close();
    }
  }, 60_000);

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
  }, 60_000);
});

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
/** A status frame or what only a status line says. */
const STATUS_TEXT = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|retrying|waiting for the model|choosing skills|thinking|Ctrl-C to cancel/;

/** A pattern for `words` as a terminal shows them wrapped: any run of spaces may be a row break. */
function wrapped(words: string): string {
  return words
    .split(" ")
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\s+");
}

/** A terminal's columns for a row (CJK two), counted apart from the code under test. */
const columnsOf = (row: string) =>
  [...row].reduce((sum, ch) => sum + (/[\u2e80-\u9fff\uff00-\uff60]/.test(ch) ? 2 : 1), 0);

/** The most rows showing a status line at any moment of the transcript, and the rows at the end. */
function statusRows(transcript: string, columns: number): { most: number; final: string[] } {
  const screen = terminalScreen(columns);
  let most = 0;
  screen.write(transcript, () => {
    most = Math.max(most, screen.rows().filter((row) => SPINNER.test(row)).length);
  });
  return { most, final: screen.rows() };
}

describe("the status line in a real terminal", () => {
  // The model fails with a long message and the bot retries: the longest status there is.
  for (const columns of [40, 80]) {
    it(`at ${columns} columns a retrying turn shows one status line at every moment, and none once answered`, async () => {
      const fake = await startFakeOpenAI();
      try {
        fake.respond(() => ({
          status: 500,
          body: { error: { message: `upstream overloaded: ${"the provider says so at length ".repeat(8)}` } },
        }));
        const workspaceDir = join(tempDir(), "rt");
        const run = await driveChat(
          workspaceDir,
          { LLM_BASE_URL: fake.url, LLM_MAX_RETRIES: "3" },
          [
            { expect: "you> ", timeout: 30 },
            { send: "hi\r" },
            { expect: "retrying", timeout: 15 },
            { expect: wrapped("bot> Sorry, the model service is unavailable right now (server error)"), timeout: 60 },
            { expect: "you> " },
            { send: "\x04" },
          ],
          columns,
        );
        expect(run.failed_step, run.transcript).toBeNull();
        // The retries were drawn frame after frame, long enough to wrap before each was cut.
        expect(run.transcript.match(/retrying/g)?.length ?? 0, run.transcript).toBeGreaterThan(10);
        const { most, final } = statusRows(run.transcript, columns);
        expect(most, run.transcript).toBe(1);
        expect(
          final.filter((row) => SPINNER.test(row) || /retrying|Ctrl-C to cancel/.test(row)),
          final.join("\n"),
        ).toEqual([]);
      } finally {
        await fake.close();
      }
    }, 60_000);
  }

  it("at 80 columns, retries with a long error and then a streamed answer: one status row at most, none once the answer streams, the answer wrapped and whole", async () => {
    const fake = await startFakeOpenAI();
    try {
      const failure = {
        status: 500,
        body: { error: { message: `upstream overloaded: ${"the provider says so at length ".repeat(8)}` } },
      };
      const answer = [
        "The service restarts in **three** steps, and each one can be checked on its own before the next one begins:",
        "",
        "1. Stop the old process with `systemctl stop app` and wait until all of its open connections have drained.",
        "2. Deploy the new build, start it again and watch its log for a minute or two.",
        "",
        "After that the restart is finished.",
      ].join("\n");
      // Routed at once; the answer's call fails three times before the model streams (token-sized pieces, 20 ms apart).
      fake.enqueue(routeTo([], "restart"), failure, failure, failure, { text: answer, chunkDelayMs: 20 });
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(
        workspaceDir,
        { LLM_BASE_URL: fake.url, LLM_MAX_RETRIES: "3" },
        [
          { expect: "you> ", timeout: 30 },
          { send: "how do I restart the service?\r" },
          { expect: "retrying", timeout: 15 },
          { expect: "restart is finished\\.", timeout: 60 },
          { expect: "you> " },
          { send: "\x04" },
        ],
        80,
      );
      expect(run.failed_step, run.transcript).toBeNull();
      expect(run.exit_code, run.transcript).toBe(0);
      // The answer's call streamed, after three failures whose retries were drawn frame after frame.
      expect(fake.requests.filter((request) => request.stream === true).length, run.transcript).toBe(4);
      expect(run.transcript.match(/retrying/g)?.length ?? 0, run.transcript).toBeGreaterThan(10);

      // Replayed character by character: at no moment more than one row holds a status frame,
      // and from the answer's first text on, none at all.
      const screen = terminalScreen(80);
      let most = 0;
      let duringAnswer = 0;
      screen.write(run.transcript, () => {
        const rows = screen.rows();
        const statusRowCount = rows.filter((row) => SPINNER.test(row)).length;
        most = Math.max(most, statusRowCount);
        if (rows.some((row) => row.startsWith("bot> "))) duringAnswer = Math.max(duringAnswer, statusRowCount);
      });
      const rows = screen.rows();
      expect(most, run.transcript).toBe(1);
      expect(duringAnswer, rows.join("\n")).toBe(0);
      // No row other than the cursor's holds a status frame or a retry's words once answered.
      expect(
        rows.slice(0, -1).filter((row) => STATUS_TEXT.test(row)),
        rows.join("\n"),
      ).toEqual([]);

      // The answer: Markdown shown plainly, every word whole and in order, wrapped within 79 columns, shown once.
      const first = rows.findIndex((row) => row.startsWith("bot> "));
      const last = rows.findIndex((row, index) => index > first && row.includes("restart is finished."));
      const shown = rows.slice(first, last + 1);
      const plain = answer.replaceAll("**", "").replaceAll("`", "");
      expect(shown.join(" ").split(/\s+/), shown.join("\n")).toEqual(`bot> ${plain}`.split(/\s+/));
      expect(shown.length, shown.join("\n")).toBeGreaterThan(6);
      expect(Math.max(...shown.map(columnsOf)), shown.join("\n")).toBeLessThanOrEqual(79);
      expect(shown, shown.join("\n")).toContain("");
      expect(
        rows.filter((row) => row.includes("Deploy the new build")),
        rows.join("\n"),
      ).toHaveLength(1);
    } finally {
      await fake.close();
    }
  }, 90_000);

  it("follows a resize at once, cuts by display width (CJK is two columns) and stops drawing once cleared", () => {
    const writes: string[] = [];
    const output = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          writes.push(chunk.toString("utf8"));
          done();
        },
      }),
      { columns: 80 },
    );
    const status = createStatusLine(output, { locale: "zh", now: () => 0 });
    // Each frame erases the row, then draws; its width is counted as a terminal counts it.
    const frameWidths = () =>
      writes.splice(0).map((chunk) => {
        expect(chunk.startsWith("\r\x1b[2K"), chunk).toBe(true);
        return [...chunk.slice(5)].reduce(
          (sum, character) => sum + (/[\u2e80-\u9fff\uff00-\uff60]/.test(character) ? 2 : 1),
          0,
        );
      });
    status.show({ state: "tool", tool: `library.search ${"经验".repeat(40)}` });
    expect(frameWidths()).toEqual([79]);
    output.columns = 30;
    output.emit("resize");
    expect(frameWidths()).toEqual([29]);
    status.clear();
    expect(writes.splice(0)).toEqual(["\r\x1b[2K"]);
    output.emit("resize");
    expect(writes).toEqual([]);
  });
});

describe("one language: BOT_LOCALE=zh in a real terminal", () => {
  it("the prompt, the status line, every command's reply and a failure are Chinese", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.respond(() => ({ status: 500 }));
      const workspaceDir = join(tempDir(), "rt");
      const run = await driveChat(workspaceDir, { BOT_LOCALE: "zh", LLM_BASE_URL: fake.url, LLM_MAX_RETRIES: "1" }, [
        { expect: "你> ", timeout: 30 },
        { send: "/help\r" },
        { expect: "/feedback good\\|bad \\[说明\\] 评价我上一个回答" },
        { expect: "你> " },
        { send: "/distill_skill\r" },
        { expect: "用法：/distill_skill <标签>" },
        { expect: "你> " },
        { send: "/distill_skill deploy\r" },
        { expect: "没有带标签 deploy 的有效经验" },
        { expect: "你> " },
        { send: "/skill_versions\r" },
        { expect: "用法：/skill_versions" },
        { expect: "你> " },
        { send: "/skill_versions distilled-deploy\r" },
        { expect: "distilled-deploy 还没有任何版本" },
        { expect: "你> " },
        { send: "/capability_gaps\r" },
        { expect: "最近 \\d+ 小时没有能力缺口" },
        { expect: "你> " },
        { send: "你好\r" },
        { expect: "正在重试", timeout: 15 },
        { expect: "抱歉，模型服务暂时不可用（服务器出错）", timeout: 30 },
        { expect: "你> " },
        { send: "/capability_gaps\r" },
        {
          expect:
            "环境问题（最近 \\d+ 小时，不会起草成技能）：\r\n- 模型服务不可用（服务器出错或无法连接） · 1 次 · 最近 0 分钟前",
        },
        { expect: "你> " },
        { send: "\x04" },
      ]);
      expect(run.failed_step, run.transcript).toBeNull();
      expect(run.exit_code, run.transcript).toBe(0);
      // Every reply, whole: no English sentence inside, and no English chrome before it.
      // A terminal shows code spans without their backticks: a `laoding …` command is a command, not English.
      const replies = [...run.transcript.matchAll(/机器人> ([\s\S]*?)\r\n\r\n/g)].map((match) =>
        (match[1] ?? "").replace(/\blaoding(?: [a-z][a-z-]*)+/g, "`command`"),
      );
      expect(replies.length, run.transcript).toBe(8);
      expect(replies.flatMap((reply) => (englishRun(reply) ? [`${englishRun(reply)} in: ${reply}`] : []))).toEqual([]);
      expect(run.transcript).not.toMatch(/you> |bot> |waiting for the model|choosing skills|retrying|Ctrl-C to cancel/);
      // The failure's terminal notice is framed in Chinese too (the log message itself stays as the log file has it).
      expect(run.transcript).toMatch(/错误：model call failed（详情：laoding logs --trace tr-[0-9a-f]+）/);
      expect(run.transcript).not.toMatch(/error: |warning: |\(details: /);
    } finally {
      await fake.close();
    }
  }, 90_000);
});

describe("laoding chat under a supervisor (no terminal)", () => {
  it("SIGTERM lets the answer in progress finish within SHUTDOWN_GRACE_MS, then cancels it; the process ends", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.respond(() => ({ text: "too late", delayMs: 30_000 }));
      const workspaceDir = join(tempDir(), "rt");
      const child = spawn(
        process.execPath,
        ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
        {
          cwd: REAL_REPO_ROOT,
          env: {
            PATH: process.env.PATH ?? "",
            LOG_LEVEL: "info",
            BOT_LOCALE: "en",
            LLM_BASE_URL: fake.url,
            LLM_MODEL: "fake",
            LLM_API_KEY: "sk-x",
            LLM_TIMEOUT_MS: "60000",
            TOOLHOST_SANDBOX: "none",
            SHUTDOWN_GRACE_MS: "300",
          },
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
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
  }, 60_000);
});
