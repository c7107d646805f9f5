/**
 * `laoding start` says once, at start, which chat bot has no operator and the command
 * that adds one (issue 24 item 4): as a plain line when logs go to the file, as one JSON
 * line when LOG_LEVEL in the environment puts the logs on stderr.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegram } from "../fakes/telegram-server.js";
import { REAL_REPO_ROOT, tempDir } from "../helpers/temp-dir.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Starts the bot, waits until it is ready, stops it with SIGTERM; its stderr. */
async function startAndStop(env: NodeJS.ProcessEnv): Promise<string> {
  const telegram = await startFakeTelegram();
  closers.push(() => telegram.close());
  telegram.addBot("42:GOOD", "laoding_bot");
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "start", "--workspace", join(tempDir(), "ws")],
    {
      cwd: REAL_REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        BOT_LOCALE: "en",
        TOOLHOST_SANDBOX: "none",
        TELEGRAM_BOT_TOKEN: "42:GOOD",
        TELEGRAM_API_ROOT: telegram.apiRoot,
        TELEGRAM_ALLOWED_USERS: "*",
        ...env,
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
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  return stderr;
}

const WARNING =
  "telegram:main: no operator, so nobody in a chat can run /capability_gaps or /reload_skills; add one with `laoding operators add telegram:<user id>`";

describe("laoding start and operators", () => {
  it("warns once per chat bot without an operator, with the command to add one", async () => {
    const stderr = await startAndStop({});
    expect(stderr.split("\n").filter((line) => line.includes("no operator"))).toEqual([`warning: ${WARNING}`]);
  });

  it("with the logs on stderr the warning is one JSON line, not a second plain one", async () => {
    const stderr = await startAndStop({ LOG_LEVEL: "info" });
    const lines = stderr.split("\n").filter((line) => line.includes("no operator"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 40, msg: WARNING });
  });

  it("says nothing about operators when the bot has one", async () => {
    const stderr = await startAndStop({ OPERATOR_IDS: "telegram:123456" });
    expect(stderr).not.toContain("no operator");
    expect(stderr).toContain("LaodingBot ready: telegram @laoding_bot (agent main).");
  });
});
