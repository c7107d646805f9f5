/**
 * `laoding import go` against a Go-era install written by the test (go-fixture.ts): the
 * real CLI, a real workspace seeded by `laoding init`, real SQLite, the agent's real
 * toolhost for the copies, and the loopback fake model for "the imported bot answers".
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeDatabaseUrl } from "../../src/store/sql/database-url.js";
import { openStore } from "../../src/store/store.js";
import { isRoutingRequest, routeTo, startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { runLaoding } from "../helpers/cli.js";
import { REAL_REPO_ROOT, fakeRepo, tempDir } from "../helpers/temp-dir.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";
import { writeGoFixture, type GoFixture } from "./go-fixture.js";

let fake: FakeOpenAI;
let go: GoFixture;
let repoRoot: string;
let workspaceDir: string;
const importGo = (...extra: string[]) =>
  runLaoding(["import", "go", "--from", go.dir, "--workspace", workspaceDir, ...extra], {
    repoRoot,
    env: { TOOLHOST_SANDBOX: "auto" },
  });
const envText = () => readFileSync(join(workspaceDir, "configs", "env"), "utf8");
const rowCount = (table: string) => {
  const db = new Database(join(workspaceDir, "data", "laoding.db"), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS count FROM ${table}`).get() as { count: number }).count;
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  fake = await startFakeOpenAI();
  go = writeGoFixture({ llmBaseUrl: fake.url, now: Date.now() });
  repoRoot = fakeRepo({ scope: "file" });
  workspaceDir = join(tempDir("laoding-import-", "file"), "rt");
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  expect(seeded.code, seeded.stderr).toBe(0);
  // The operator's own value: the import must not replace it.
  writeFileSync(join(workspaceDir, "configs", "env"), envText().replace(/^LOG_LEVEL=.*$/m, "LOG_LEVEL=error"));
});

afterAll(async () => {
  await fake.close();
});

describe("laoding import go", () => {
  it("plans every section (env, skills, drafts, database rows, files) and writes nothing", async () => {
    const envBefore = envText();
    const run = await importGo();
    expect(run.code, run.stderr).toBe(0);
    const out = run.stdout;
    expect(out).toMatch(
      /^ {2}renamed +OPENAI_API_KEY=sk\*\*\*\*67 -> LLM_API_KEY=sk\*\*\*\*67: the Go name for LLM_API_KEY$/m,
    );
    expect(out).not.toContain("sk-go-secret-1234567");
    expect(out).toMatch(
      /^ {2}kept +REACT_MAX_STEPS=6 -> REACT_MAX_STEPS=6: .*\[replaces the seeded default REACT_MAX_STEPS=8\]$/m,
    );
    expect(out).toMatch(
      /^ {2}kept +LOG_LEVEL=debug .*\[NOT written: configs\/env already sets LOG_LEVEL=error; yours stays\]$/m,
    );
    expect(out).toMatch(
      new RegExp(
        `^ {2}mapped +ALLOWED_DIRS=.* -> ALLOWED_DIRS=${go.sharedDocs}: the Go bot's own folders \\(\\./workspace, \\./data\\) are left out`,
        "m",
      ),
    );
    expect(out).toMatch(/^ {2}mapped +AUTO_SKILL_DIR=skills: gap drafts are per agent now/m);
    expect(out).toMatch(
      /^ {2}explained ALLOWED_COMMANDS=ls,cat,curl,go -> ALLOWED_COMMANDS=ls,cat,curl,go: .*curl fetches over the network; go downloads modules.*"network": true/m,
    );
    expect(out).toMatch(/^ {2}dropped +GO_ONLY_SETTING=1: not a variable of this bot/m);
    expect(out).toMatch(/^ {2}dropped +WORK_DIR=workspace: each agent has its own working tree/m);
    expect(out).toMatch(
      /^ {2}copy +weather_report -> weather-report at .*skills\/weather-report\/SKILL\.md \(WARNING: no frontmatter; name from the folder, description from its 触发背景 section\)$/m,
    );
    expect(out).toMatch(
      /^ {2}SKIPPED +skill_builder -> skill-builder at .*: skill_builder becomes skill-builder, which .*skills\/skill-builder\/SKILL\.md already is/m,
    );
    expect(out).toMatch(/^drafts: 1 auto_\* -> agent main's drafts folder$/m);
    expect(out).toMatch(
      /^ {2}copy +auto_export_report -> auto-export-report at .*share\/agents\/main\/skills\/auto-export-report\/SKILL\.md/m,
    );
    expect(out).toMatch(/^ {2}messages: 4 row\(s\) -> messages/m);
    expect(out).toMatch(
      /^ {4}columns recognised: chat <- chat_id, role <- role, content <- content, time <- created_at$/m,
    );
    expect(out).toMatch(/^ {4}columns skipped: tokens$/m);
    expect(out).toMatch(/^ {2}capability_gaps: 4 row\(s\) -> capability_gaps/m);
    expect(out).toMatch(/^ {4}columns skipped: severity$/m);
    expect(out).toMatch(/rows to import: 3 message\(s\), 4 gap\(s\); already imported before: 0; rows skipped: 1/);
    expect(out).toMatch(/skipped messages row 1: role "system" is not chat history/);
    expect(out).toMatch(/^ {2}tables skipped \(not imported\): settings$/m);
    expect(out).toMatch(
      /^ {2}copy +local\/reports\/weekly\.csv -> .*rt\/workspace\/main\/local\/reports\/weekly\.csv$/m,
    );
    expect(out).toMatch(/^ {2}skipped passwd-link -> .*: a link \(never followed\)/m);
    expect(run.stderr).toMatch(/warning: .*weather_report\/skill\.md has no frontmatter/);
    expect(out).toMatch(/plan only: nothing was written/);
    expect(envText()).toBe(envBefore);
    expect(existsSync(join(workspaceDir, "skills", "weather-report"))).toBe(false);
    expect(rowCount("messages")).toBe(0);
  });

  it("applies: backup first, env merged, skills and drafts copied, rows and files imported, verified and reported", async () => {
    const run = await importGo("--apply");
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^backup written: (\S+)/m);
    const backupDir = /^backup written: (\S+)/m.exec(run.stdout)?.[1] as string;
    expect(readdirSync(backupDir).sort()).toEqual(["configs.tar.gz", "laoding.db", "skills.tar.gz"]);
    const env = envText();
    expect(env).toMatch(/^LLM_API_KEY=sk-go-secret-1234567$/m);
    expect(env).toMatch(/^REACT_MAX_STEPS=6$/m);
    expect(env).not.toMatch(/^REACT_MAX_STEPS=8$/m);
    expect(env).toMatch(/^LOG_LEVEL=error$/m);
    expect(env).not.toMatch(/GO_ONLY_SETTING|AUTO_SKILL_DIR|WORK_DIR/);
    expect(env).toMatch(new RegExp(`^ALLOWED_DIRS=${go.sharedDocs}$`, "m"));
    const weather = readFileSync(join(workspaceDir, "skills", "weather-report", "SKILL.md"), "utf8");
    expect(weather).toMatch(/^---\nname: weather-report\ndescription: 用户询问某个城市的天气时使用。\n---\n# 天气播报/);
    const draft = readFileSync(
      join(workspaceDir, "share", "agents", "main", "skills", "auto-export-report", "SKILL.md"),
      "utf8",
    );
    expect(draft).toMatch(
      /^---\nname: auto-export-report\ndescription: Export the weekly report as CSV into reports\/\.\nstatus: draft\norigin: gap\nintent_key: export-report\n---\n/,
    );
    expect(readFileSync(join(workspaceDir, "workspace", "main", "local", "reports", "weekly.csv"), "utf8")).toBe(
      "week,count\n1,3\n",
    );
    expect(existsSync(join(workspaceDir, "workspace", "main", "passwd-link"))).toBe(false);
    expect(rowCount("messages")).toBe(3);
    expect(rowCount("capability_gaps")).toBe(4);
    expect(run.stdout).toMatch(/^import verified; report: (\S+)$/m);
    const report = JSON.parse(readFileSync(/report: (\S+)$/m.exec(run.stdout)?.[1] as string, "utf8"));
    expect(report).toMatchObject({
      verified: true,
      problems: [],
      rows: { messages: 3, gaps: 4, sessions: 2, drafts: 1 },
      files: { copied: 2 },
    });
    expect(report.backup).toBe(backupDir);
  });

  it("a second apply imports nothing new and still verifies", async () => {
    const envBefore = envText();
    const run = await importGo("--apply");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^database: 0 message\(s\) in 0 new session\(s\), 0 gap\(s\), 0 draft\(s\) recorded; 7 row\(s\) imported before$/m,
    );
    expect(run.stdout).toMatch(/^skills: 0 copied, 3 already there, 1 skipped$/m);
    expect(run.stdout).toMatch(/^files: 0 copied, 2 already there, 1 skipped$/m);
    expect(run.stdout).toMatch(/^import verified/m);
    expect(envText()).toBe(envBefore);
    expect(rowCount("messages")).toBe(3);
    expect(rowCount("capability_gaps")).toBe(4);
  });

  it("laoding skills list shows the Go skills, the one without frontmatter with a warning", async () => {
    const skillsDir = join(workspaceDir, "skills");
    // A Go-era skill left in skills/ without frontmatter loads in place, without import.
    writeFileSync(join(skillsDir, "README.txt"), "");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(skillsDir, "disk_cleanup"));
    writeFileSync(join(skillsDir, "disk_cleanup", "skill.md"), "# 清理磁盘\n\n当磁盘快满时，找出大文件并清理。\n");
    const run = await runLaoding(["skills", "list", "--json", "--workspace", workspaceDir], { repoRoot });
    expect(run.code, run.stderr).toBe(0);
    const [main] = JSON.parse(run.stdout) as {
      skills: { name: string; description: string; source: string; status: string }[];
      goEra: { name: string; descriptionFrom?: string }[];
    }[];
    const byName = new Map(main?.skills.map((skill) => [skill.name, skill]));
    expect(byName.get("weather-report")).toMatchObject({
      source: "base",
      description: "用户询问某个城市的天气时使用。",
    });
    expect(byName.get("deploy-check")).toMatchObject({
      source: "base",
      description: "Check that a deployment is healthy",
    });
    expect(byName.get("auto-export-report")).toMatchObject({ source: "agent", status: "draft" });
    expect(byName.get("skill-builder")?.description).not.toContain("Go bot");
    expect(byName.get("disk-cleanup")).toMatchObject({ description: "当磁盘快满时，找出大文件并清理。" });
    expect(main?.goEra).toContainEqual(
      expect.objectContaining({ name: "disk-cleanup", folder: "disk_cleanup", descriptionFrom: "paragraph" }),
    );
    // The text listing says the same as a warning a person reads.
    const text = await runLaoding(["skills", "list", "--workspace", workspaceDir], { repoRoot });
    expect(text.stdout).toContain(
      `WARNING ${join(skillsDir, "disk_cleanup", "skill.md")}: no frontmatter; loaded as disk-cleanup, description from its paragraph (laoding import go adds frontmatter)`,
    );
  });

  it("the imported bot answers with the Go chat's history, and a new gap lands under the imported intent", async () => {
    // The model says what it cannot do (a routed-to-no-skill turn alone is no gap since issue 27).
    let reported = false;
    fake.respond((request) => {
      if (isRoutingRequest(request)) return routeTo([], "export_report");
      if (reported) return { text: "Here is the weekly report again." };
      reported = true;
      return {
        toolCalls: [
          { name: "report_gap", arguments: { asked: "export the weekly report", missing: "an export tool" } },
        ],
      };
    });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REAL_REPO_ROOT, "src/cli/main.ts"), "chat", "--workspace", workspaceDir],
      {
        cwd: REAL_REPO_ROOT,
        env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent", BOT_LOCALE: "en", DISTILLATION_ENABLED: "false" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.stdin.end("export the weekly report again\n");
    expect(await new Promise<number | null>((resolve) => child.on("exit", resolve)), stderr).toBe(0);
    expect(stdout).toBe("Here is the weekly report again.\n");
    const answering = fake.requests.find((request) => !isRoutingRequest(request));
    // The imported Go conversation is the chat's history: the model sees it before the new message.
    const contents = answering?.messages.map((message) => message.content ?? "") ?? [];
    expect(contents.indexOf(go.historyText)).toBeGreaterThan(0);
    expect(contents.indexOf(go.historyText)).toBeLessThan(contents.indexOf("export the weekly report again"));
    expect(answering?.authorization).toBe("Bearer sk-go-secret-1234567");

    const gaps = await runLaoding(["gaps", "--json", "--workspace", workspaceDir], { repoRoot });
    expect(gaps.code, gaps.stderr).toBe(0);
    const [report] = JSON.parse(gaps.stdout) as {
      clusters: { intentKey: string; reason: string; count: number; draft: { skillName: string } | null }[];
    }[];
    // The imported cluster keeps its draft; the new gap is keyed by the same (canonical) intent.
    expect(report?.clusters).toContainEqual(
      expect.objectContaining({
        intentKey: "export-report",
        reason: "no_skill",
        count: 3,
        draft: expect.objectContaining({ skillName: "auto-export-report" }),
      }),
    );
    expect(report?.clusters).toContainEqual(
      expect.objectContaining({ intentKey: "export-report", reason: "reported", count: 1 }),
    );
    expect(report?.clusters).toContainEqual(
      expect.objectContaining({ intentKey: "deploy-rollback", reason: "tool_failure", count: 1 }),
    );
    const store = await openStore(join(workspaceDir, "data", "laoding.db"), { now: () => Date.now() });
    try {
      expect(
        await store.sql.get(
          "SELECT count(*) AS count FROM sessions WHERE agent_id = 'main' AND channel = 'console' AND chat_id = 'local'",
        ),
      ).toEqual({ count: 1 });
    } finally {
      await store.close();
    }
  });

  it("refuses a Go table that lacks a required column, naming it and the names tried", async () => {
    const broken = writeGoFixture({
      llmBaseUrl: fake.url,
      now: Date.now(),
      messagesSchema: "CREATE TABLE messages (id INTEGER PRIMARY KEY, chat_id TEXT, body TEXT, role TEXT, ts INTEGER)",
    });
    const run = await runLaoding(["import", "go", "--from", broken.dir, "--workspace", workspaceDir], { repoRoot });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /the Go database's table "messages" has no column for content \(tried content, text, message; it has id, chat_id, body, role, ts\)/,
    );
    const skipped = await runLaoding(
      ["import", "go", "--from", broken.dir, "--workspace", workspaceDir, "--skip-table", "messages"],
      { repoRoot },
    );
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/^ {2}messages: not read/m);
  });
});

describe.skipIf(!STORE_ENGINES.includes("postgres"))("laoding import go onto PostgreSQL (DATABASE_URL)", () => {
  it("says no database backup is taken (pg_dump first), imports the rows in one transaction, verifies, and a second apply adds nothing", async () => {
    const pgWorkspace = join(tempDir("laoding-import-pg-", "file"), "rt");
    const seeded = await runLaoding(["init", "--workspace", pgWorkspace], { repoRoot });
    expect(seeded.code, seeded.stderr).toBe(0);
    const databaseUrl = await testDatabaseUrl();
    const where = describeDatabaseUrl(databaseUrl);
    const importPg = (...extra: string[]) =>
      runLaoding(["import", "go", "--from", go.dir, "--workspace", pgWorkspace, ...extra], {
        repoRoot,
        env: { TOOLHOST_SANDBOX: "auto", DATABASE_URL: databaseUrl },
      });
    const plan = await importPg();
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      `note: the PostgreSQL database ${where} is not backed up automatically (only the SQLite file is); take a backup with pg_dump before --apply`,
    );

    const run = await importPg("--apply");
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const backupDir = /^backup written: (\S+) \(configs\.tar\.gz, skills\.tar\.gz\)$/m.exec(run.stdout)?.[1] as string;
    expect(readdirSync(backupDir).sort()).toEqual(["configs.tar.gz", "skills.tar.gz"]);
    expect(run.stdout).toMatch(
      /^no database backup: the PostgreSQL database .* take a backup with pg_dump before --apply/m,
    );
    expect(run.stdout).toMatch(/^import verified; report: /m);
    expect(existsSync(join(pgWorkspace, "data", "laoding.db"))).toBe(false);
    const report = JSON.parse(readFileSync(/report: (\S+)$/m.exec(run.stdout)?.[1] as string, "utf8"));
    expect(report).toMatchObject({
      verified: true,
      problems: [],
      rows: { messages: 3, gaps: 4, sessions: 2, drafts: 1 },
    });

    const again = await importPg("--apply");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /^database: 0 message\(s\) in 0 new session\(s\), 0 gap\(s\), 0 draft\(s\) recorded; 7 row\(s\) imported before$/m,
    );
    const store = await openStore(databaseUrl, { now: () => Date.now() });
    try {
      expect(await store.sql.get("SELECT count(*) AS count FROM messages")).toEqual({ count: 3 });
      expect(await store.sql.get("SELECT count(*) AS count FROM capability_gaps")).toEqual({ count: 4 });
    } finally {
      await store.close();
    }
  }, 60_000);
});
