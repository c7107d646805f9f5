import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { systemClock } from "../../src/store/clock.js";
import { latestVersion } from "../../src/store/sql/migrate.js";
import { openStore } from "../../src/store/store.js";
import { STORE_TABLES } from "../../src/store/tables.js";
import { runLaoding } from "../helpers/cli.js";
import { PASSWORD_ROLE_GROUP } from "../helpers/postgres-global-setup.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

const withPostgres = STORE_ENGINES.includes("postgres");
const PASSWORD = "Tr0ub4dor-and-3";

async function workspace(options: { seed?: boolean } = {}) {
  const repoRoot = fakeRepo();
  const workspaceDir = join(tempDir(), "rt");
  await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  const file = join(workspaceDir, "data", "laoding.db");
  if (options.seed !== false) {
    const store = await openStore(file, systemClock);
    try {
      const session = await store.sessions.activeSession("main", "telegram", "chat-1");
      for (let index = 0; index < 5; index += 1)
        await store.messages.append({
          sessionId: session.id,
          role: index % 2 === 0 ? "user" : "assistant",
          content: `line ${index}`,
          traceId: `t${index}`,
        });
      await store.experiences.add({
        agentId: "main",
        source: "manual",
        summary: "Check the disk before a large download.",
        category: "best_practice",
        confidence: 0.5,
        createdBy: "operator",
        contentHash: "h1",
        tags: ["disk", "download"],
      });
      const admitted = await store.channels.admit(["telegram:update:1"], {
        botKey: "main",
        chatId: "chat-1",
        message: "hi",
      });
      await store.channels.storeReply({
        botKey: "main",
        chatId: "chat-1",
        ...(admitted.duplicate ? {} : { inboxId: admitted.inboxId as number }),
        parts: ["hello"],
      });
    } finally {
      await store.close();
    }
  }
  const db = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runLaoding(["db", ...args, "--workspace", workspaceDir], { repoRoot, env });
  return { repoRoot, workspaceDir, file, db };
}

type Status = {
  engine: string;
  where: string;
  exists: boolean;
  schemaVersion: number;
  latestVersion: number;
  tables: Record<string, number | null>;
  server?: { version: string; roundTripMs: number };
};

let admin: pg.Pool | undefined;
afterAll(async () => {
  await admin?.end();
});

/** A database owned by a role that must log in with PASSWORD (the test server trusts every other role). */
async function passwordDatabase(): Promise<{ url: string; name: string }> {
  admin ??= new pg.Pool({ connectionString: inject("laodingPostgresAdminUrl"), max: 1 });
  const name = `copier_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${PASSWORD}' IN ROLE ${PASSWORD_ROLE_GROUP}`);
  await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
  const url = new URL(inject("laodingPostgresAdminUrl"));
  url.username = name;
  url.password = PASSWORD;
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

describe("laoding db status on SQLite", () => {
  it("says the file is not created yet, then shows the schema version and every table's rows", async () => {
    const { file, db } = await workspace({ seed: false });
    const empty = await db(["status"]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain(
      `engine  sqlite\nwhere   ${file} (not created yet: \`laoding start\` creates it)\nschema  version 0 (this code: ${latestVersion()})\n`,
    );
    expect(empty.stdout).toMatch(/^ {2}messages +-$/m);

    const store = await openStore(file, systemClock);
    const session = await store.sessions.activeSession("main", "console", "local");
    await store.messages.append({ sessionId: session.id, role: "user", content: "hi", traceId: "t1" });
    await store.close();
    const text = await db(["status"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `engine  sqlite\nwhere   ${file}\nschema  version ${latestVersion()} (this code: ${latestVersion()})\nrows\n`,
    );
    expect(text.stdout).toMatch(/^ {2}sessions +1$/m);
    expect(text.stdout).toMatch(/^ {2}messages +1$/m);
    expect(text.stdout).toMatch(/^ {2}total +2$/m);
    expect(text.stdout).not.toContain("server");
    const json = JSON.parse((await db(["status", "--json"])).stdout) as Status;
    expect(json).toMatchObject({
      engine: "sqlite",
      where: file,
      exists: true,
      schemaVersion: latestVersion(),
      latestVersion: latestVersion(),
    });
    expect(Object.keys(json.tables)).toEqual([...STORE_TABLES]);
    expect(json.tables).toMatchObject({ sessions: 1, messages: 1, experiences: 0 });
    expect(json.server).toBeUndefined();
  });

  it("rejects a wrong command line with the usage", async () => {
    const { db } = await workspace({ seed: false });
    expect((await db([])).stderr).toMatch(/an action is required: status or copy[\s\S]*Usage: laoding db status/);
    expect((await db(["drop"])).code).toBe(2);
    expect((await db(["status", "--resume"])).stderr).toMatch(/--resume is for db copy/);
    expect((await db(["copy", "--batch", "0", "--to", "postgres://db/x"])).stderr).toMatch(
      /--batch must be a whole number from 1 to 50000/,
    );
    expect((await db(["copy"])).stderr).toMatch(/--to postgres:\/\/… is required \(or set DATABASE_URL\)/);
  });

  it("refuses a target that is not PostgreSQL, saying what is expected and never echoing it", async () => {
    const { db } = await workspace();
    const run = await db(["copy", "--to", `mysql://root:${PASSWORD}@db/laoding`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--to: the target must be a PostgreSQL URL such as postgres:\/\/USER@HOST:5432\/DATABASE, not a mysql: URL/,
    );
    expect(run.stderr + run.stdout).not.toContain(PASSWORD);
    const path = await db(["copy", "--to", "/srv/backup.db"]);
    expect(path.code).toBe(2);
    expect(path.stderr).toMatch(/not a file path or other text/);
  });

  it("names host:port and the network's words for an unreachable server, never the password", async () => {
    const { db } = await workspace();
    const run = await db(["copy", "--to", `postgres://laoding:${PASSWORD}@127.0.0.1:1/laoding`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^laoding db: cannot reach PostgreSQL at 127\.0\.0\.1:1\/laoding: .*ECONNREFUSED/);
    expect(run.stderr + run.stdout).not.toContain(PASSWORD);
  });
});

describe.skipIf(!withPostgres)("laoding db copy and status on PostgreSQL", () => {
  it("copies the workspace's SQLite store with progress and verified counts; status shows the same rows on PostgreSQL", async () => {
    const { file, db } = await workspace();
    const before = JSON.parse((await db(["status", "--json"])).stdout) as Status;
    const url = await testDatabaseUrl();
    const where = new URL(url).host + new URL(url).pathname;

    const run = await db(["copy", "--to", url, "--batch", "2"]);
    expect(run.stderr).toBe(
      STORE_TABLES.map((table) => `${table}: ${before.tables[table]}/${before.tables[table]}\n`).join(""),
    );
    expect(run.code).toBe(0);
    const total = Object.values(before.tables).reduce<number>((sum, count) => sum + (count ?? 0), 0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^copied ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(schema version ${latestVersion()}\\) to ${where}: ${total} rows in \\d+\\.\\d s, \\d+ rows/s\\n`,
      ),
    );
    expect(run.stdout).toMatch(/^ {2}messages +5$/m);
    expect(run.stdout).toContain("verified: every table has as many rows in PostgreSQL as in the SQLite snapshot");

    const status = await db(["status", "--json"], { DATABASE_URL: url });
    expect(status.code).toBe(0);
    const after = JSON.parse(status.stdout) as Status;
    expect(after).toMatchObject({
      engine: "postgres",
      where,
      exists: true,
      schemaVersion: latestVersion(),
      latestVersion: latestVersion(),
    });
    expect(after.tables).toEqual(before.tables);
    expect(after.server?.version).toMatch(/^\d+(\.\d+)?/);
    expect(after.server?.roundTripMs).toBeGreaterThan(0);
    const text = await db(["status"], { DATABASE_URL: url });
    expect(text.stdout).toMatch(
      new RegExp(
        `^engine  postgres\\nwhere   ${where}\\nschema  version ${latestVersion()} \\(this code: ${latestVersion()}\\)\\nserver  PostgreSQL \\d+\\S* .*· SELECT 1 round trip \\d+\\.\\d\\d ms\\nrows\\n`,
      ),
    );
    expect(text.stdout).toMatch(/^ {2}messages +5$/m);
  });

  it("refuses a second copy into the same database unless --resume, which adds nothing; DATABASE_URL is the default target", async () => {
    const { db } = await workspace();
    const url = await testDatabaseUrl();
    expect((await db(["copy"], { DATABASE_URL: url })).code).toBe(0);
    const again = await db(["copy", "--to", url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^laoding db: PostgreSQL at 127\.0\.0\.1:\d+\/\w+ is not empty \(sessions: 1 rows, messages: 5 rows, .*\): copy into an empty database, or pass --resume to finish an interrupted copy into this one\n$/,
    );
    const resumed = await db(["copy", "--to", url, "--resume"]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/rows \(0 new, \d+ already there\)/);
    expect(resumed.stdout).toMatch(/^ {2}messages +5 \(0 new\)$/m);
  });

  it("never prints the password: a copy and a status with it, and a wrong one named by host:port and the server's words", async () => {
    const { db } = await workspace();
    const { url, name } = await passwordDatabase();
    const outputs: string[] = [];
    const copied = await db(["copy", "--to", url]);
    outputs.push(copied.stdout, copied.stderr);
    expect(copied.code).toBe(0);
    expect(copied.stdout).toContain(`/${name}: `);
    const status = await db(["status"], { DATABASE_URL: url });
    outputs.push(status.stdout, status.stderr);
    expect(status.stdout).toMatch(new RegExp(`^where   127\\.0\\.0\\.1:\\d+/${name}$`, "m"));

    const wrong = new URL(url);
    wrong.password = `${PASSWORD}-wrong`;
    const refused = await db(["copy", "--to", wrong.toString(), "--resume"]);
    outputs.push(refused.stdout, refused.stderr);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^laoding db: cannot reach PostgreSQL at 127\\.0\\.0\\.1:\\d+/${name}: password authentication failed for user "${name}"`,
      ),
    );
    const wrongStatus = await db(["status"], { DATABASE_URL: wrong.toString() });
    outputs.push(wrongStatus.stdout, wrongStatus.stderr);
    expect(wrongStatus.code).toBe(1);
    expect(wrongStatus.stderr).toMatch(/password authentication failed/);
    for (const output of outputs) expect(output).not.toContain(PASSWORD);
  });
});
