/**
 * No secret reaches any output, whatever the network does: the real `laoding channels
 * check`, `laoding start` (its bots cannot log in) and a `laoding chat` turn (a real
 * process) run with distinctive secrets against every endpoint unreachable (a closed
 * loopback port) and against a server that echoes each request in its error (token in the
 * URL, Bearer header, app_secret body). Then stdout, stderr, every file of the workspace
 * (raw bytes: the log folder, the database and its WAL) and every text column of every
 * table must hold none of them.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";
import { closedPortUrl, startEchoingServer } from "./echoing-server.js";

const TELEGRAM_TOKEN = "5550001234:AAHk9-SeCrEtTeLeGrAm_0123456789abcdef";
const SECRETS = {
  TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
  FEISHU_APP_SECRET: "fsSeCrEt4f1c9a7e2b",
  LLM_API_KEY: "sk-llmSeCrEt7d2e9b41c0",
  ADMIN_TOKEN: "adminSeCrEt0c8e4b21aa",
};
/** What must never be shown: each secret, and the secret half of the token alone (the bot id is public). */
const NEEDLES = [...Object.values(SECRETS), TELEGRAM_TOKEN.split(":")[1] as string];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function environment(endpoint: string): NodeJS.ProcessEnv {
  return {
    ...SECRETS,
    FEISHU_APP_ID: "cli_a1b2c3d4e5f60718",
    TELEGRAM_API_ROOT: endpoint,
    FEISHU_DOMAIN: endpoint,
    LLM_BASE_URL: `${endpoint}/v1`,
    LLM_MODEL: "fake",
    LLM_MAX_RETRIES: "0",
    TELEGRAM_ALLOWED_USERS: "*",
    FEISHU_ALLOWED_USERS: "*",
    // Debug: every log line is written, and the CLI prints stacks.
    LOG_LEVEL: "debug",
    BOT_LOCALE: "en",
    TOOLHOST_SANDBOX: "none",
  };
}

/**
 * The real CLI as its own process, so its logs (pino writes to fd 2) are in `stderr`
 * too; `input` is what a person types (one chat turn).
 */
async function laoding(
  args: string[],
  options: { env: NodeJS.ProcessEnv; input?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), ...args], {
    cwd: REAL_REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  closers.push(async () => void child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(options.input ?? "");
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { code, stdout, stderr };
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

/** Every text value of every table of every database in the workspace, as "table.column: value". */
function databaseTexts(workspaceDir: string): string[] {
  return filesUnder(workspaceDir)
    .filter((path) => path.endsWith(".db"))
    .flatMap((path) => {
      const db = new Database(path, { readonly: true });
      try {
        const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
        return tables.flatMap(({ name }) =>
          (db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]).flatMap((row) =>
            Object.entries(row).flatMap(([column, value]) =>
              typeof value === "string" ? [`${name}.${column}: ${value}`] : [],
            ),
          ),
        );
      } finally {
        db.close();
      }
    });
}

function expectNoSecret(where: string, text: string): void {
  for (const needle of NEEDLES)
    expect(text.includes(needle), `${where} shows ${needle}:\n${text.slice(0, 4000)}`).toBe(false);
}

async function runEverything(endpoint: string) {
  const workspaceDir = join(tempDir(), "ws");
  const env = environment(endpoint);
  const startTelegram = await laoding(["start", "--workspace", workspaceDir], {
    env: { ...env, MESSAGE_CHANNEL: "telegram" },
  });
  const startFeishu = await laoding(["start", "--workspace", workspaceDir], {
    env: { ...env, MESSAGE_CHANNEL: "feishu" },
  });
  const check = await laoding(["channels", "check", "--workspace", workspaceDir], { env });
  const chat = await laoding(["chat", "--workspace", workspaceDir], { env, input: "please summarise the news\n" });
  // Without LOG_LEVEL in its environment a piped chat logs to the file under the workspace.
  const { LOG_LEVEL: _level, ...fileLogging } = env;
  const chatLoggingToFile = await laoding(["chat", "--workspace", workspaceDir], {
    env: fileLogging,
    input: "and the weather?\n",
  });
  const outputs = { startTelegram, startFeishu, check, chat, chatLoggingToFile };
  for (const [name, run] of Object.entries(outputs)) {
    expectNoSecret(`${name} stdout`, run.stdout);
    expectNoSecret(`${name} stderr`, run.stderr);
  }
  const files = filesUnder(workspaceDir);
  // The log file holds the failed model calls: the scan below reads it.
  expect(
    files
      .filter((file) => file.endsWith("laoding.log"))
      .map((file) => readFileSync(file, "utf8"))
      .join(""),
  ).toContain("model call failed");
  for (const file of files) expectNoSecret(file, readFileSync(file).toString("latin1"));
  const texts = databaseTexts(workspaceDir);
  expectNoSecret("the database", texts.join("\n"));
  return { ...outputs, texts, files };
}

describe("secrets in error text", () => {
  it("never shows a secret when every endpoint is unreachable", async () => {
    const endpoint = await closedPortUrl();
    const run = await runEverything(endpoint);
    // The failures really happened, and still say what failed.
    expect(run.startTelegram.code).toBe(1);
    expect(run.startTelegram.stderr).toContain(`cannot reach the Telegram Bot API at ${endpoint}`);
    expect(run.startTelegram.stderr).toContain("ECONNREFUSED");
    expect(run.startFeishu.code).toBe(1);
    expect(run.startFeishu.stderr).toContain(`cannot reach Feishu at ${endpoint}`);
    expect(run.check.code).toBe(1);
    expect(run.check.stdout).toMatch(/FAILED {2}telegram .*cannot reach the Telegram Bot API/);
    expect(run.check.stdout).toMatch(/FAILED {2}feishu .*cannot reach Feishu/);
    expect(run.chat.code).toBe(0);
    expect(run.texts.some((text) => text.startsWith("capability_gaps.detail: cannot reach the model server"))).toBe(
      true,
    );
  }, 120_000);

  it("never shows a secret when every endpoint fails echoing the request, token, key and body", async () => {
    const server = await startEchoingServer();
    closers.push(() => server.close());
    const run = await runEverything(server.url);
    expect(run.startTelegram.stderr).toMatch(
      /Telegram refused to log in: 401 Unauthorized: POST \/bot\S*\[redacted\]\/getMe/,
    );
    expect(run.startFeishu.stderr).toContain(
      "Feishu refused the app credentials: app secret invalid: POST /open-apis/auth/v3/tenant_access_token/internal",
    );
    expect(run.check.stdout).toContain('"app_secret":"[redacted]"');
    expect(run.chat.code).toBe(0);
    // The model's error, echoed key and all, is stored as the gap's detail: without the key.
    const modelFailure = expect.stringMatching(
      /^capability_gaps\.detail: the model server failed \(500\): 500 upstream failed for POST \/v1\/chat\/completions \(authorization: Bearer \[redacted\]\)/,
    );
    expect(run.texts.filter((text) => text.startsWith("capability_gaps.detail"))).toEqual([modelFailure, modelFailure]);
  }, 120_000);
});
