/**
 * `laoding doctor` against real parts: the real CLI, a seeded workspace in a temp folder,
 * a real SQLite file, the real sandbox probe (bubblewrap, the agent's uid as root), and
 * loopback fakes of the model server and the Telegram Bot API. A healthy workspace
 * passes every check; then one fault of each kind is planted and must be named with its
 * fix, and no secret may reach stdout or stderr in any run.
 */
import {
  appendFileSync,
  chmodSync,
  existsSync,
  closeSync,
  openSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DOCTOR_HINT } from "../../src/doctor/doctor-hint.js";
import type { DoctorJson } from "../../src/doctor/doctor-report.js";
import { openStore } from "../../src/store/store.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../fakes/openai-server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram-server.js";
import { runLaoding, type CliRun } from "../helpers/cli.js";
import { fakeRepo, tempDir, writeFile } from "../helpers/temp-dir.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const API_KEY = "sk-doctor-secret-key-4711";
const BOT_TOKEN = "4242:DOCTOR-secret-bot-token";
const ADMIN_TOKEN = "doctor-admin-secret-token-0815";
const SECRETS = [
  API_KEY,
  BOT_TOKEN,
  ADMIN_TOKEN,
  "sk-wrong-secret-key-9999",
  "9999:WRONG-secret-bot-token",
  "short-sec",
];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Setup = {
  repoRoot: string;
  workspaceDir: string;
  model: FakeOpenAI;
  telegram: FakeTelegram;
  env: NodeJS.ProcessEnv;
};

/** A seeded workspace with a migrated database, a model that answers and a bot that logs in. */
async function healthy(workspaceDir = join(tempDir(), "rt")): Promise<Setup> {
  const [model, telegram] = await Promise.all([startFakeOpenAI(), startFakeTelegram()]);
  closers.push(
    () => model.close(),
    () => telegram.close(),
  );
  model.respond((request) =>
    request.authorization === `Bearer ${API_KEY}`
      ? { text: "p" }
      : { status: 401, body: { error: { message: "Incorrect API key provided" } } },
  );
  telegram.addBot(BOT_TOKEN, "doctor_bot");
  const repoRoot = fakeRepo();
  const init = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  expect(init.code, init.stderr).toBe(0);
  await (await openStore(join(workspaceDir, "data", "laoding.db"), { now: () => Date.now() })).close();
  const env = {
    LLM_BASE_URL: model.url,
    LLM_MODEL: "fake-model",
    LLM_API_KEY: API_KEY,
    TELEGRAM_BOT_TOKEN: BOT_TOKEN,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    TELEGRAM_ALLOWED_USERS: "*",
    ADMIN_PORT: "18999",
    ADMIN_TOKEN,
  };
  return { repoRoot, workspaceDir, model, telegram, env };
}

/** Runs the doctor and checks, for every run, that no secret reached its output. */
async function doctor(setup: Setup, env: NodeJS.ProcessEnv = {}, json = false): Promise<CliRun> {
  const run = await runLaoding(["doctor", "--workspace", setup.workspaceDir, ...(json ? ["--json"] : [])], {
    repoRoot: setup.repoRoot,
    env: { ...setup.env, ...env },
  });
  for (const secret of SECRETS) {
    expect(run.stdout, "a secret in stdout").not.toContain(secret);
    expect(run.stderr, "a secret in stderr").not.toContain(secret);
  }
  return run;
}

/** The ✗ line of `title` and the fix under it. */
function failure(stdout: string, title: string | RegExp): { line: string; fix: string } {
  const lines = stdout.split("\n");
  const index = lines.findIndex(
    (line) => line.startsWith("✗ ") && (typeof title === "string" ? line.startsWith(`✗ ${title}`) : title.test(line)),
  );
  expect(index, `no ✗ line for ${String(title)} in:\n${stdout}`).toBeGreaterThanOrEqual(0);
  const fix = lines[index + 1] ?? "";
  expect(fix).toMatch(/^ {4}fix: /);
  return { line: lines[index] as string, fix: fix.replace(/^ {4}fix: /, "") };
}

function failureLines(stdout: string): string[] {
  return stdout.split("\n").filter((line) => line.startsWith("✗ "));
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("laoding doctor", () => {
  it("passes every check on a healthy workspace, having asked the model for one token and logged the bot in", async () => {
    const setup = await healthy();
    const run = await doctor(setup);
    expect(run.code, run.stdout).toBe(0);
    const checks = run.stdout.split("\n").filter((line) => /^[✓✗-] /.test(line));
    expect(
      checks.every((line) => line.startsWith("✓ ")),
      run.stdout,
    ).toBe(true);
    for (const title of [
      "Node.js",
      "workspace",
      "configuration",
      "agents.json: main",
      "share layout",
      "sandbox of agent main",
      "skills of agent main",
      "database",
      "disk space",
      "admin API on",
      "model fake-model at",
      "telegram bot of agent main (TELEGRAM_BOT_TOKEN) logs in as @doctor_bot",
    ]) {
      expect(
        checks.some((line) => line.startsWith(`✓ ${title}`)),
        title,
      ).toBe(true);
    }
    expect(run.stdout).toMatch(/✓ database .*laoding\.db \(quick_check ok, schema version \d+\)/);
    expect(run.stdout).toMatch(/All \d+ checks passed\.\n$/);
    // One tiny request: one token, no retries.
    expect(setup.model.requests).toHaveLength(1);
    expect((setup.model.requests[0] as RecordedRequest & { max_tokens?: number }).max_tokens).toBe(1);
    expect(setup.telegram.calls.map((call) => call.method)).toEqual(["getMe"]);
  });

  it("names a workspace never seeded with `laoding init`, skips what needs it, and creates nothing", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "missing");
    const run = await runLaoding(["doctor", "--workspace", workspaceDir], { repoRoot });
    expect(run.code).toBe(1);
    expect(failure(run.stdout, `workspace ${workspaceDir}`)).toEqual({
      line: `✗ workspace ${workspaceDir}: it does not exist`,
      fix: `laoding init --workspace ${workspaceDir}`,
    });
    for (const title of ["agents.json", "sandbox", "skills", "database", "disk space", "chat bots"])
      expect(run.stdout).toContain(`- ${title}: skipped (the workspace is not ready, see above)`);
    expect(existsSync(workspaceDir)).toBe(false);
    expect((await runLaoding(["doctor", "--help"], { repoRoot })).stdout).toContain("Usage: laoding doctor");
    expect((await runLaoding(["doctor", "--wrokspace", workspaceDir], { repoRoot })).code).toBe(2);
  });

  it("--json prints one document that matches the text report", async () => {
    const setup = await healthy();
    // Healthy, one failure, and a bad configuration (with skipped checks).
    for (const env of [{}, { LLM_API_KEY: "sk-wrong-secret-key-9999" }, { LLM_TIMEOUT_MS: "soon" }]) {
      const text = await doctor(setup, env);
      const json = await doctor(setup, env, true);
      expect(json.code).toBe(text.code);
      const document = JSON.parse(json.stdout) as DoctorJson;
      expect(document.ok).toBe(text.code === 0);
      const expected = document.checks.flatMap((check) =>
        check.skipped
          ? [`- ${check.title}: skipped (${check.detail})`]
          : check.ok
            ? [`✓ ${check.title}`, ...(check.detail ? [`    note: ${check.detail}`] : [])]
            : [`✗ ${check.title}: ${check.detail}`, `    fix: ${check.fix}`],
      );
      // Free disk space is read twice, once per run: other processes may write in between.
      const steady = (lines: string[]) => lines.map((line) => line.replace(/\([\d.]+ [KMGT]iB free\)/, "(… free)"));
      expect(steady(text.stdout.split("\n").slice(0, expected.length))).toEqual(steady(expected));
      expect(document.checks.every((check) => typeof check.id === "string" && check.id.length > 0)).toBe(true);
    }
  });

  it("names every bad variable and every bad agents.json entry, not only the first, and skips what needs them", async () => {
    const setup = await healthy();
    appendFileSync(join(setup.workspaceDir, "configs", "env"), "LLM_TIMEOUT_MS=fast\nGAP_DRAFT_TRIGGER_COUNT=lots\n");
    writeFileSync(
      join(setup.workspaceDir, "configs", "agents.json"),
      JSON.stringify({
        agents: [
          { id: "main", name: "Main", netwrok: true },
          { id: "Ops Team", name: "Ops" },
        ],
      }),
    );
    const run = await doctor(setup);
    expect(run.code).toBe(1);
    const envFile = join(setup.workspaceDir, "configs", "env");
    const timeout = failure(run.stdout, /^✗ configuration: LLM_TIMEOUT_MS="fast" from /);
    expect(timeout.fix).toBe(`Set LLM_TIMEOUT_MS to milliseconds from 1000 to 600000 in ${envFile}`);
    expect(failure(run.stdout, /^✗ configuration: GAP_DRAFT_TRIGGER_COUNT="lots"/).fix).toMatch(
      /^Set GAP_DRAFT_TRIGGER_COUNT to .* in /,
    );
    const unknownField = failure(run.stdout, /^✗ agents\.json: .*agents\[0\] \(id "main"\): unknown field `netwrok`/);
    expect(unknownField.fix).toMatch(
      /^Remove or correct `netwrok` in agents\[0\] of .*; an agent may have id, name, .*network/,
    );
    const badId = failure(run.stdout, /^✗ agents\.json: .*agents\[1\] \(id "Ops Team"\): `id`: must match/);
    expect(badId.fix).toMatch(/^Set agents\[1\]\.id in .* to match/);
    expect(failureLines(run.stdout)).toHaveLength(4);
    expect(run.stdout).toMatch(/^- model: skipped \(the configuration is invalid, see above\)$/m);
  });

  it("names a base URL without /v1 (404), a 404 on a good URL as the model name, and one ending in /chat/completions without asking", async () => {
    const setup = await healthy();
    setup.model.respond(() => ({ status: 404, body: { error: { message: "Not Found" } } }));
    const bare = setup.model.url.replace(/\/v1$/, "");
    const noV1 = await doctor(setup, { LLM_BASE_URL: bare });
    const missing = failure(noV1.stdout, "model fake-model at");
    expect(missing.line).toMatch(/answered 404: LLM_BASE_URL has no \/v1/);
    expect(missing.fix).toBe(`Set LLM_BASE_URL=${bare}/v1 in ${join(setup.workspaceDir, "configs", "env")}`);
    expect(noV1.code).toBe(1);
    // The same 404 behind a well-formed URL is the model's name, not the URL.
    const unknownModel = failure((await doctor(setup)).stdout, "model fake-model at");
    expect(unknownModel.line).toMatch(/answered 404 for model "fake-model"/);
    expect(unknownModel.fix).toMatch(/^Set LLM_MODEL in .* to a model the server serves/);
    const asked = setup.model.requests.length;
    const doubled = failure(
      (await doctor(setup, { LLM_BASE_URL: `${setup.model.url}/chat/completions` })).stdout,
      "model fake-model at",
    );
    expect(doubled.line).toMatch(/LLM_BASE_URL ends in \/chat\/completions/);
    expect(doubled.fix).toMatch(new RegExp(`^Set LLM_BASE_URL=${setup.model.url.replace(/[.]/g, "\\.")} in `));
    expect(setup.model.requests).toHaveLength(asked);
  });

  it("names a refused API key and an unreachable model host", async () => {
    const setup = await healthy();
    const refused = await doctor(setup, { LLM_API_KEY: "sk-wrong-secret-key-9999" });
    const key = failure(refused.stdout, "model fake-model at");
    expect(key.line).toMatch(/the server refused the API key \(401\)$/);
    expect(key.fix).toMatch(/^Set LLM_API_KEY in .* to a valid key for 127\.0\.0\.1:\d+/);
    const port = await closedPort();
    const unreachable = failure(
      (await doctor(setup, { LLM_BASE_URL: `http://127.0.0.1:${port}/v1` })).stdout,
      "model fake-model at",
    );
    expect(unreachable.line).toMatch(/cannot reach the model server \(.*ECONNREFUSED/);
    expect(unreachable.fix).toContain(`listens at 127.0.0.1:${port}`);
  });

  it("names a Telegram token the Bot API refuses, with where it comes from", async () => {
    const setup = await healthy();
    const run = await doctor(setup, { TELEGRAM_BOT_TOKEN: "9999:WRONG-secret-bot-token" });
    expect(run.code).toBe(1);
    const bot = failure(run.stdout, "telegram bot of agent main (TELEGRAM_BOT_TOKEN)");
    expect(bot.line).toMatch(/Telegram refused to log in: 401 Unauthorized/);
    expect(bot.fix).toMatch(/^Check TELEGRAM_BOT_TOKEN: copy the token from @BotFather again/);
  });

  it("names an admin token that is too short, and a missing one while ADMIN_PORT is set", async () => {
    const setup = await healthy();
    const short = failure(
      (await doctor(setup, { ADMIN_TOKEN: "short-sec" })).stdout,
      "configuration: ADMIN_TOKEN=(secret) from the environment",
    );
    expect(short.line).toContain("shorter than 16 characters");
    expect(short.fix).toBe("Set ADMIN_TOKEN to a random string of at least 16 characters in the environment");
    const { ADMIN_TOKEN: _dropped, ...withoutToken } = setup.env;
    const missing = await runLaoding(["doctor", "--workspace", setup.workspaceDir], {
      repoRoot: setup.repoRoot,
      env: withoutToken,
    });
    const admin = failure(missing.stdout, "admin API on");
    expect(admin.line).toMatch(/ADMIN_PORT is set but ADMIN_TOKEN is not/);
    expect(admin.fix).toMatch(/ADMIN_TOKEN=\$\(openssl rand -hex 24\)/);
  });

  // As root each agent runs as its own uid, which cannot pass a mode-700 folder such as /root.
  it.runIf(process.getuid?.() === 0)(
    "names a workspace under a mode-700 folder that none-unsafe cannot reach, with the chmod that fixes it",
    async () => {
      const closed = tempDir();
      chmodSync(closed, 0o700);
      const setup = await healthy(join(closed, "rt"));
      const run = await doctor(setup, { TOOLHOST_SANDBOX: "none-unsafe", TOOLHOST_BWRAP_PATH: "/nonexistent/bwrap" });
      expect(run.code).toBe(1);
      const sandbox = failure(run.stdout, "sandbox of agent main (TOOLHOST_SANDBOX=none-unsafe)");
      expect(sandbox.line).toMatch(
        /uid \d+ cannot reach its folders .* and bubblewrap, which would bind them, cannot run \(\/nonexistent\/bwrap is not installed\)$/,
      );
      expect(sandbox.fix).toContain(`chmod o+x ${closed}`);
      expect(sandbox.fix).toContain("move the workspace out of a private folder");
      // With bubblewrap the jail binds the folders, and the same workspace passes.
      const jailed = await doctor(setup, { TOOLHOST_SANDBOX: "none-unsafe" });
      expect(jailed.stdout).toMatch(
        /^✓ sandbox of agent main \(TOOLHOST_SANDBOX=none-unsafe\): in its own namespaces/m,
      );
    },
  );

  it("names a skill that fails to load", async () => {
    const setup = await healthy();
    const broken = writeFile(
      join(setup.workspaceDir, "skills", "broken-skill", "SKILL.md"),
      "---\nname: another-name\ndescription: x\n---\nbody\n",
    );
    const run = await doctor(setup);
    expect(run.code).toBe(1);
    const skill = failure(run.stdout, "skills of agent main");
    expect(skill.line).toContain(
      `${broken} does not load: name "another-name" does not match its folder "broken-skill"`,
    );
    expect(skill.fix).toMatch(new RegExp(`^Fix ${broken.replace(/[.]/g, "\\.")} .*laoding skills validate`));
  });

  it("names a corrupted database, read-only", async () => {
    const setup = await healthy();
    const file = join(setup.workspaceDir, "data", "laoding.db");
    const store = await openStore(file, { now: () => Date.now() });
    await store.sql.exec(
      "CREATE TABLE doctor_filler (text TEXT); CREATE INDEX doctor_filler_text ON doctor_filler (text)",
    );
    await store.transaction(async () => {
      for (let row = 0; row < 2_000; row += 1)
        await store.sql.run("INSERT INTO doctor_filler VALUES (?)", [`row ${row} ${"x".repeat(100)}`]);
    });
    await store.sql.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    await store.close();
    // Scribble over the headers of the last pages (the filler's b-trees).
    const pages = Math.floor(statSync(file).size / 4096);
    const fd = openSync(file, "r+");
    for (let page = pages - 8; page < pages; page += 1) writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, page * 4096);
    closeSync(fd);
    const sizeBefore = statSync(file).size;
    const run = await doctor(setup);
    expect(run.code).toBe(1);
    const database = failure(run.stdout, `database ${file}`);
    expect(database.line).toMatch(/malformed/);
    expect(database.fix).toMatch(/^Stop the bot, keep the file \(cp .*laoding\.db .*\.broken\)/);
    expect(statSync(file).size).toBe(sizeBefore);
  });

  it.skipIf(!STORE_ENGINES.includes("postgres"))(
    "with DATABASE_URL checks PostgreSQL by connecting: engine and host:port/database, the server's words, never the password",
    async () => {
      const setup = await healthy();
      const url = new URL(await testDatabaseUrl());
      const where = `127.0.0.1:${url.port}${url.pathname}`;
      const run = await doctor(setup, { DATABASE_URL: url.toString() });
      expect(run.code, run.stdout).toBe(0);
      expect(run.stdout).toContain(
        `✓ database PostgreSQL ${where} (connected; no tables yet: \`laoding start\` creates them)\n`,
      );
      // The SQLite file is not what this bot uses: not checked.
      expect(run.stdout).not.toMatch(/database .*laoding\.db/);
      const missing = new URL(url);
      missing.pathname = "/no_such_database";
      missing.username = "laoding";
      missing.password = "doctor-db-secret-pw-31";
      const refused = await doctor(setup, { DATABASE_URL: missing.toString() });
      expect(refused.code).toBe(1);
      const database = failure(refused.stdout, `database PostgreSQL 127.0.0.1:${url.port}/no_such_database`);
      expect(database.line).toContain('cannot connect: database "no_such_database" does not exist');
      expect(database.fix).toMatch(/^Check DATABASE_URL/);
      expect(`${refused.stdout}${refused.stderr}`).not.toContain("doctor-db-secret-pw-31");
    },
  );

  it("laoding start that fails on the configuration or a bot's login points to laoding doctor", async () => {
    const setup = await healthy();
    const env = { ...setup.env, ADMIN_PORT: "0" };
    const badConfig = await runLaoding(["start", "--workspace", setup.workspaceDir], {
      repoRoot: setup.repoRoot,
      env: { ...env, LLM_TIMEOUT_MS: "fast" },
    });
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toMatch(/LLM_TIMEOUT_MS="fast"/);
    expect(badConfig.stderr.trimEnd().endsWith(DOCTOR_HINT)).toBe(true);
    const badLogin = await runLaoding(["start", "--workspace", setup.workspaceDir], {
      repoRoot: setup.repoRoot,
      env: { ...env, TELEGRAM_BOT_TOKEN: "9999:WRONG-secret-bot-token" },
    });
    expect(badLogin.code).toBe(1);
    expect(badLogin.stderr).toMatch(/telegram bot of agent main cannot log in/);
    expect(badLogin.stderr.trimEnd().endsWith(DOCTOR_HINT)).toBe(true);
    expect(badLogin.stderr).not.toContain("WRONG-secret");
  });
});
