/**
 * A Go-era LaodingBot install written by the test: its repository folder with
 * `configs/env` (export lines, quotes, a trailing comment, Go-only names), its workspace
 * with skills (one without frontmatter, one colliding with the seeded skill-builder, an
 * auto_ draft without frontmatter), a SQLite database in a plausible Go schema (times in
 * ISO text, unix seconds and milliseconds; a column and a table we do not import) and its
 * working folder `workspace/workspace` (with a link that must not be followed).
 */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

export type GoFixture = {
  dir: string;
  databaseFile: string;
  /** The imported chat the console continues (chat id "local"). */
  historyText: string;
  sharedDocs: string;
};

export type GoFixtureOptions = { llmBaseUrl: string; now: number; messagesSchema?: string };

const HOUR_MS = 3_600_000;

export function writeGoFixture(options: GoFixtureOptions): GoFixture {
  const dir = join(tempDir("laoding-go-install-", "file"), "laodingbot-go");
  const sharedDocs = join(tempDir("laoding-go-docs-", "file"), "docs");
  mkdirSync(sharedDocs, { recursive: true });
  writeFile(
    join(dir, "configs", "env"),
    [
      "# Go LaodingBot",
      `export LLM_BASE_URL="${options.llmBaseUrl}"`,
      "export OPENAI_API_KEY='sk-go-secret-1234567'",
      "LLM_MODEL=go-model",
      "LLM_MAX_RETRIES=0",
      "REACT_MAX_STEPS=6   # the Go default",
      "MESSAGE_CHANNEL=console",
      "LOG_LEVEL=debug",
      `ALLOWED_DIRS=./workspace,./data,${sharedDocs}`,
      "ALLOWED_COMMANDS=ls,cat,curl,go",
      "AUTO_SKILL_DIR=skills",
      "WORK_DIR=workspace",
      "GO_ONLY_SETTING=1",
      "",
    ].join("\n"),
  );
  const root = join(dir, "workspace");
  writeFile(
    join(root, "skills", "weather_report", "skill.md"),
    "# 天气播报\n\n## 触发背景\n用户询问某个城市的天气时使用。\n\n## 步骤\n1. 查询天气\n",
  );
  writeFile(
    join(root, "skills", "deploy_check", "skill.md"),
    "---\nname: deploy_check\ndescription: Check that a deployment is healthy\n---\nRun the health checks.\n",
  );
  writeFile(
    join(root, "skills", "skill_builder", "skill.md"),
    "---\nname: skill_builder\ndescription: The Go bot's own skill builder\n---\nBuild.\n",
  );
  writeFile(join(root, "skills", "auto_export_report", "skill.md"), "Export the weekly report as CSV into reports/.\n");
  writeFile(join(root, "workspace", "local", "reports", "weekly.csv"), "week,count\n1,3\n");
  writeFile(join(root, "workspace", "notes.md"), "# notes from the Go bot\n");
  symlinkSync("/etc/passwd", join(root, "workspace", "passwd-link"));

  const databaseFile = join(root, "data", "laoding.db");
  mkdirSync(join(root, "data"), { recursive: true });
  const db = new Database(databaseFile);
  const iso = (ms: number) =>
    new Date(ms)
      .toISOString()
      .replace("T", " ")
      .replace(/\.\d+Z$/, "");
  const historyText = "上次我们说到周报导出，文件在 reports/weekly.csv";
  db.exec(
    options.messagesSchema ??
      "CREATE TABLE messages (id INTEGER PRIMARY KEY, chat_id TEXT, role TEXT, content TEXT, created_at DATETIME, tokens INTEGER)",
  );
  db.exec(
    "CREATE TABLE capability_gaps (id INTEGER PRIMARY KEY, intent_key TEXT, reason TEXT, trace_id TEXT, user_message TEXT, created_at DATETIME, severity TEXT)",
  );
  db.exec("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)");
  const now = options.now;
  if (!options.messagesSchema) {
    const message = db.prepare(
      "INSERT INTO messages (chat_id, role, content, created_at, tokens) VALUES (?, ?, ?, ?, 10)",
    );
    message.run("local", "system", "you are the Go bot", iso(now - 5 * HOUR_MS));
    message.run("local", "user", historyText, iso(now - 5 * HOUR_MS));
    message.run(
      "local",
      "assistant",
      "好的，周报在 reports/weekly.csv",
      Math.floor((now - 5 * HOUR_MS + 60_000) / 1000),
    );
    message.run("ops-room", "user", "deploy the service", now - 4 * HOUR_MS);
  }
  const gap = db.prepare(
    "INSERT INTO capability_gaps (intent_key, reason, trace_id, user_message, created_at, severity) VALUES (?, ?, ?, ?, ?, 'high')",
  );
  gap.run("export_report", "no_skill", "go-trace-1", "导出周报", iso(now - 3 * HOUR_MS));
  gap.run(
    "export_report",
    "no_skill",
    "go-trace-2",
    "export the weekly report",
    Math.floor((now - 2 * HOUR_MS) / 1000),
  );
  gap.run("export_report", "no_skill", "go-trace-3", "weekly report please", now - HOUR_MS);
  gap.run("deploy_rollback", "tool_error", "go-trace-4", "roll back the deploy", now - HOUR_MS);
  db.prepare("INSERT INTO settings VALUES ('version', '0.9')").run();
  db.close();
  return { dir, databaseFile, historyText, sharedDocs };
}
