/**
 * `laoding start` on chat channels and `laoding channels check`, against the loopback
 * fakes: the ready line, a bot that cannot log in, and a graceful stop that still
 * delivers the reply being prepared.
 */
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRoutingRequest, routeTo, startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { FAKE_APP_ID, startFakeFeishu, type FakeFeishu } from "../fakes/feishu-server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram-server.js";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function fakes(): Promise<{ telegram: FakeTelegram; feishu: FakeFeishu; model: FakeOpenAI }> {
  const [telegram, feishu, model] = await Promise.all([startFakeTelegram(), startFakeFeishu(), startFakeOpenAI()]);
  closers.push(
    () => telegram.close(),
    () => feishu.close(),
    () => model.close(),
  );
  return { telegram, feishu, model };
}

describe("laoding start on chat channels", () => {
  it("names each bot and agent when ready, and on SIGTERM still delivers the reply in flight", async () => {
    const { telegram, model } = await fakes();
    telegram.addBot("42:GOOD", "laoding_bot");
    model.respond((request) =>
      isRoutingRequest(request) ? routeTo([], "chat") : { text: "a considered answer", delayMs: 1_500 },
    );
    const workspaceDir = join(tempDir(), "rt");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "start", "--workspace", workspaceDir],
      {
        cwd: REAL_REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          LOG_LEVEL: "info",
          BOT_LOCALE: "en",
          TOOLHOST_SANDBOX: "none",
          TELEGRAM_BOT_TOKEN: "42:GOOD",
          TELEGRAM_API_ROOT: telegram.apiRoot,
          TELEGRAM_ALLOWED_USERS: "*",
          LLM_BASE_URL: model.url,
          LLM_MODEL: "fake",
          LLM_API_KEY: "sk-x",
          LLM_MAX_RETRIES: "0",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    closers.push(async () => void child.kill("SIGKILL"));
    let stderr = "";
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        if (stderr.includes("LaodingBot ready")) resolve();
      });
      void exited.then(() => reject(new Error(`exited before ready:\n${stderr}`)));
    });
    telegram.userMessage("42:GOOD", { chatId: 501, userId: 7, text: "think hard" });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (model.requests.some((request) => !isRoutingRequest(request))) resolve(clearInterval(check));
      }, 20);
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(telegram.sent().map((call) => call.body.text)).toEqual(["a considered answer"]);
    const lines = stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; bots?: unknown });
    const ready = lines.find((line) => line.msg.startsWith("LaodingBot ready"));
    expect(ready?.msg).toBe("LaodingBot ready: telegram @laoding_bot (agent main); press Ctrl-C to stop");
    expect(ready?.bots).toEqual([{ key: "telegram:main", name: "@laoding_bot", agent: "main" }]);
    expect(lines.map((line) => line.msg)).toContain("stopped");
    expect(stderr).not.toContain("42:GOOD");
    // A whole bot process under tsx: on a loaded CI machine its start alone can take seconds.
  }, 60_000);

  it("stops start-up when a bot cannot log in, with the platform's error and what to check", async () => {
    const { telegram } = await fakes();
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    const bad = await runLaoding(["start", "--workspace", workspaceDir], {
      repoRoot,
      env: { TELEGRAM_BOT_TOKEN: "1:WRONG", TELEGRAM_API_ROOT: telegram.apiRoot },
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "laoding start: telegram bot of agent main cannot log in: Telegram refused to log in: 401 Unauthorized. Check TELEGRAM_BOT_TOKEN: copy the token from @BotFather again",
    );
    const unreachable = await runLaoding(["start", "--workspace", workspaceDir], {
      repoRoot,
      env: { TELEGRAM_BOT_TOKEN: "1:ANY", TELEGRAM_API_ROOT: "http://127.0.0.1:1" },
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(
      /cannot reach the Telegram Bot API at http:\/\/127\.0\.0\.1:1: .*Check the network/,
    );
    const noCredentials = await runLaoding(["start", "--workspace", workspaceDir], {
      repoRoot,
      env: { MESSAGE_CHANNEL: "feishu" },
    });
    expect(noCredentials.stderr).toContain("MESSAGE_CHANNEL includes feishu, but no agent has feishu credentials");
  });
});

describe("laoding channels check", () => {
  it("logs every bot in without starting, one line each, and exits 1 when one fails", async () => {
    const { telegram, feishu } = await fakes();
    telegram.addBot("42:GOOD", "laoding_bot");
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    expect((await runLaoding(["init", "--workspace", workspaceDir], { repoRoot })).code).toBe(0);
    const env = {
      TELEGRAM_BOT_TOKEN: "42:GOOD",
      TELEGRAM_API_ROOT: telegram.apiRoot,
      FEISHU_APP_ID: FAKE_APP_ID,
      FEISHU_DOMAIN: feishu.domain,
      TELEGRAM_ALLOWED_USERS: "*",
      FEISHU_ALLOWED_USERS: "*",
    };
    const good = await runLaoding(["channels", "check", "--workspace", workspaceDir], {
      repoRoot,
      env: { ...env, FEISHU_APP_SECRET: "fake-app-secret" },
    });
    expect(good.stdout).toBe(
      "ok      telegram @laoding_bot (agent main; credentials: TELEGRAM_BOT_TOKEN)\nok      feishu Laoding Feishu (agent main; credentials: FEISHU_APP_ID and FEISHU_APP_SECRET)\n",
    );
    expect(good.code).toBe(0);
    const bad = await runLaoding(["channels", "check", "--workspace", workspaceDir], {
      repoRoot,
      env: { ...env, FEISHU_APP_SECRET: "wrong" },
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      "FAILED  feishu (agent main; credentials: FEISHU_APP_ID and FEISHU_APP_SECRET): feishu bot of agent main cannot log in: Feishu refused the app credentials: app secret invalid (code 10014). Check FEISHU_APP_ID and FEISHU_APP_SECRET",
    );
    expect(telegram.calls.filter((call) => call.method !== "getMe")).toEqual([]);
  });

  it("reads an agent's own bot token from the variable agents.json names, without calling it a typo", async () => {
    const { telegram } = await fakes();
    telegram.addBot("77:OPS", "ops_bot");
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    expect((await runLaoding(["init", "--workspace", workspaceDir], { repoRoot })).code).toBe(0);
    writeFileSync(
      join(workspaceDir, "configs/agents.json"),
      JSON.stringify({
        agents: [
          { id: "main", name: "Main" },
          { id: "ops", name: "Ops", telegram: { tokenEnv: "TG_TOKEN_OPS", allowedUsers: ["*"] } },
        ],
      }),
    );
    appendFileSync(
      join(workspaceDir, "configs/env"),
      `\nTG_TOKEN_OPS=77:OPS\nTG_TOKEN_OPZ=typo\nTELEGRAM_API_ROOT=${telegram.apiRoot}\n`,
    );
    const run = await runLaoding(["channels", "check", "--workspace", workspaceDir], { repoRoot });
    expect(run.stdout).toBe(
      "ok      telegram @ops_bot (agent ops; credentials: agents.json ops.telegram (TG_TOKEN_OPS))\n",
    );
    expect(run.stderr).not.toContain("TG_TOKEN_OPS in");
    expect(run.stderr).toContain("TG_TOKEN_OPZ in");
    writeFileSync(
      join(workspaceDir, "configs/agents.json"),
      JSON.stringify({
        agents: [
          { id: "main", name: "Main" },
          { id: "ops", name: "Ops", telegram: { tokenEnv: "TG_TOKEN_MISSING" } },
        ],
      }),
    );
    const missing = await runLaoding(["channels", "check", "--workspace", workspaceDir], { repoRoot });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'agents.json: agent "ops": telegram.tokenEnv names TG_TOKEN_MISSING, which is not set',
    );
  });
});
