/**
 * The doctor's checks one by one, with their side effects handed in (statfs, a real
 * SQLite file in a temp folder, a database on the test run's PostgreSQL server): the
 * faults that cannot be planted on this host for the CLI test (an old Node, a full disk,
 * a database from a newer version).
 */
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { checkDatabase, checkPostgresDatabase } from "../../src/doctor/database-check.js";
import { checkDisk, MIN_FREE_DISK_BYTES } from "../../src/doctor/disk-check.js";
import { checkReach } from "../../src/doctor/reach-check.js";
import { parseAgents } from "../../src/config/agents.js";
import type { LoadedConfig } from "../../src/config/load-config.js";
import type { RuntimeLayout } from "../../src/config/runtime-layout.js";
import { renderText } from "../../src/doctor/doctor-report.js";
import { checkNodeVersion } from "../../src/doctor/node-version-check.js";
import { failed, passed, skipped } from "../../src/doctor/check-result.js";
import { systemClock } from "../../src/store/clock.js";
import { describeDatabaseUrl } from "../../src/store/sql/database-url.js";
import { latestVersion } from "../../src/store/sql/migrate.js";
import { openStore } from "../../src/store/store.js";
import { PASSWORD_ROLE_GROUP } from "../helpers/postgres-global-setup.js";
import { tempDir } from "../helpers/temp-dir.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";

describe("doctor checks", () => {
  it("Node.js: an older version than engines.node fails with the install to do; equal or newer passes", () => {
    const old = checkNodeVersion("v20.5.1", ">=20.6");
    expect(old).toMatchObject({ ok: false, detail: "LaodingBot needs Node.js >=20.6" });
    expect(old.fix).toMatch(/^Install Node\.js 20 or newer .*nvm install 20/);
    expect(checkNodeVersion("v18.19.0", ">=20.6").ok).toBe(false);
    expect(checkNodeVersion("v20.6.0", ">=20.6").ok).toBe(true);
    expect(checkNodeVersion("v22.1.0", ">=20.6").ok).toBe(true);
  });

  it("disk: too few free bytes or inodes fail, naming the folder; a statfs error fails too", () => {
    const roomy = { bavail: (10 * MIN_FREE_DISK_BYTES) / 4096, bsize: 4096, files: 1_000_000, ffree: 900_000 };
    expect(checkDisk("/srv/ws", () => roomy)).toMatchObject({
      ok: true,
      title: "disk space at /srv/ws (4.9 GiB free)",
    });
    const full = checkDisk("/srv/ws", () => ({ ...roomy, bavail: 100 }));
    expect(full).toMatchObject({ ok: false, detail: "only 400.0 KiB free (the doctor wants at least 500.0 MiB)" });
    expect(full.fix).toContain("/srv/ws");
    expect(checkDisk("/srv/ws", () => ({ ...roomy, ffree: 12 })).detail).toBe(
      "only 12 inodes free: few new files can be created",
    );
    // A file system that reports no inodes at all (files 0) is not short of them.
    expect(checkDisk("/srv/ws", () => ({ ...roomy, files: 0, ffree: 0 })).ok).toBe(true);
    const missing = checkDisk("/srv/ws", () => {
      throw Object.assign(new Error("no such file"), { code: "ENOENT" });
    });
    expect(missing).toMatchObject({ ok: false, detail: "cannot read the file system's free space: ENOENT" });
  });

  it("database: a missing file passes without being created; an older schema passes; a newer one fails", () => {
    const dir = tempDir();
    const file = join(dir, "laoding.db");
    expect(checkDatabase(file, existsSync, 5)).toMatchObject({
      ok: true,
      title: `database ${file} (not created yet: \`laoding start\` creates it)`,
    });
    expect(existsSync(file)).toBe(false);
    const db = new Database(file);
    db.pragma("user_version = 3");
    db.close();
    expect(checkDatabase(file, existsSync, 5)).toMatchObject({
      ok: true,
      title: `database ${file} (quick_check ok, schema version 3; \`laoding start\` migrates it to 5)`,
    });
    const newer = checkDatabase(file, existsSync, 2);
    expect(newer).toMatchObject({ ok: false, detail: "schema version 3 is newer than this code knows (2)" });
    expect(newer.fix).toMatch(/^Upgrade LaodingBot/);
  });

  it("the text report: ✓, ✗ with the fix indented, - for skipped, a summary, and secrets scrubbed", () => {
    const text = renderText(
      [
        passed("node", "Node.js v20"),
        failed("model", "model m", "refused sk-secret-123", "Set LLM_API_KEY"),
        skipped("chat-bots", "chat bots", "the configuration is invalid, see above"),
      ],
      ["sk-secret-123"],
    );
    expect(text).toBe(
      [
        "✓ Node.js v20",
        "✗ model m: refused [redacted]",
        "    fix: Set LLM_API_KEY",
        "- chat bots: skipped (the configuration is invalid, see above)",
        "",
        "1 problem(s) found, 1 check(s) skipped; 1 passed. Fix the problems above, then run `laoding doctor` again.",
        "",
      ].join("\n"),
    );
  });

  describe.skipIf(!STORE_ENGINES.includes("postgres"))("database on PostgreSQL (DATABASE_URL)", () => {
    it("connects and reads the schema version without migrating: empty, older, current, newer", async () => {
      const url = await testDatabaseUrl();
      const title = `database PostgreSQL ${describeDatabaseUrl(url)}`;
      expect(title).toMatch(/^database PostgreSQL 127\.0\.0\.1:\d+\/\w+$/);
      const empty = await checkPostgresDatabase(url, 5);
      expect(empty).toMatchObject({
        ok: true,
        title: `${title} (connected; no tables yet: \`laoding start\` creates them)`,
      });
      // The doctor only read it: still empty.
      expect(await checkPostgresDatabase(url, 5)).toEqual(empty);
      await (await openStore(url, systemClock)).close();
      const latest = latestVersion();
      expect(await checkPostgresDatabase(url)).toMatchObject({
        ok: true,
        title: `${title} (connected, schema version ${latest})`,
      });
      expect(await checkPostgresDatabase(url, latest + 2)).toMatchObject({
        ok: true,
        title: `${title} (connected, schema version ${latest}; \`laoding start\` migrates it to ${latest + 2})`,
      });
      const newer = await checkPostgresDatabase(url, latest - 1);
      expect(newer).toMatchObject({
        ok: false,
        title,
        detail: `schema version ${latest} is newer than this code knows (${latest - 1})`,
      });
      expect(newer.fix).toMatch(/^Upgrade LaodingBot/);
    });

    it("a refusal is the server's own words, with the engine and host:port/database but never the password", async () => {
      const url = new URL(await testDatabaseUrl());
      const missing = new URL(url);
      missing.pathname = "/no_such_database";
      const noDatabase = await checkPostgresDatabase(missing.toString());
      expect(noDatabase).toMatchObject({
        ok: false,
        title: `database PostgreSQL 127.0.0.1:${url.port}/no_such_database`,
        detail: 'cannot connect: database "no_such_database" does not exist (3D000)',
      });
      expect(noDatabase.fix).toMatch(/^Check DATABASE_URL \(host, port, user, password, database name, sslmode\)/);

      const role = `doctor_pw_${process.pid}`;
      const admin = new pg.Client({ connectionString: url.toString() });
      await admin.connect();
      try {
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
        await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'right-password-1' IN ROLE ${PASSWORD_ROLE_GROUP}`);
        const wrong = new URL(url);
        wrong.username = role;
        wrong.password = "wrong-secret-pw-77";
        const refused = await checkPostgresDatabase(wrong.toString());
        expect(refused).toMatchObject({
          ok: false,
          title: `database PostgreSQL 127.0.0.1:${url.port}${url.pathname}`,
          detail: `cannot connect: password authentication failed for user "${role}" (28P01)`,
        });
        expect(JSON.stringify(refused)).not.toContain("wrong-secret-pw-77");
        const right = new URL(wrong);
        right.password = "right-password-1";
        expect((await checkPostgresDatabase(right.toString())).ok).toBe(true);
      } finally {
        await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
        await admin.end();
      }

      const closed = new URL(url);
      closed.port = String(await closedPort());
      closed.password = "unused-secret-pw-88";
      const unreachable = await checkPostgresDatabase(closed.toString());
      expect(unreachable).toMatchObject({
        ok: false,
        title: `database PostgreSQL 127.0.0.1:${closed.port}${url.pathname}`,
      });
      expect(unreachable.detail).toMatch(/^cannot connect: .*ECONNREFUSED/);
      expect(JSON.stringify(unreachable)).not.toContain("unused-secret-pw-88");
    });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("doctor: network and MCP servers", () => {
  const setup = (agents: unknown[], values: Record<string, string>, hosts?: string) => {
    const dir = tempDir();
    const hostsFile = hosts === undefined ? undefined : join(dir, "egress-hosts");
    if (hostsFile && hosts !== undefined) writeFileSync(hostsFile, hosts);
    const loaded = {
      config: { MCP_START_TIMEOUT_MS: 30_000, TOOLHOST_CALL_TIMEOUT_MS: 60_000 },
      declaredValue: (name: string) => values[name],
    } as unknown as LoadedConfig;
    const layout = {
      egressHostsFile: hostsFile,
      envFile: join(dir, "configs/env"),
      agentTrees: (id: string) => ({ workTree: join(dir, id) }),
    } as unknown as RuntimeLayout;
    return { loaded, layout, agents: parseAgents(JSON.stringify({ agents }), "agents.json") };
  };

  it("fails on what would stop start-up or a server: an unset $NAME, a bad EGRESS_HOSTS line, a missing command", async () => {
    const { loaded, layout, agents } = setup(
      [
        {
          id: "a",
          name: "A",
          network: { allow: ["api.github.com"] },
          mcpServers: { gh: { command: "sh", env: { T: "$GH_TOKEN" } } },
        },
        { id: "b", name: "B", mcpServers: { x: { command: "laoding-no-such-server" } } },
      ],
      {},
      "10.0.0.1 ok.test\n10.0.0.2 *.wild.test\n",
    );
    const results = await checkReach(loaded, layout, agents);
    expect(results.find((result) => result.id === "reach:egress-hosts")).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/egress-hosts:2/),
    });
    expect(results.find((result) => result.id === "reach:a")).toMatchObject({
      ok: false,
      detail: expect.stringContaining("mcpServers.gh.env.T refers to $GH_TOKEN"),
    });
    expect(results.find((result) => result.id === "reach:b")).toMatchObject({
      ok: false,
      detail: expect.stringContaining('the command "laoding-no-such-server" is not installed'),
    });
  });

  it("passes, saying what each agent reaches, when everything resolves", async () => {
    const { loaded, layout, agents } = setup(
      [
        {
          id: "a",
          name: "A",
          network: { allow: ["api.github.com"] },
          mcpServers: { gh: { command: "sh", env: { T: "$GH_TOKEN" } } },
        },
      ],
      { GH_TOKEN: "ghp_x" },
    );
    expect(await checkReach(loaded, layout, agents)).toEqual([
      { id: "reach:egress-hosts", ok: true, title: "EGRESS_HOSTS", detail: "not set (DNS only)" },
      {
        id: "reach:a",
        ok: true,
        title: "network and MCP servers of agent a",
        detail: "allow list of 1; MCP servers gh",
      },
    ]);
    const none = setup([{ id: "a", name: "A" }], {});
    expect(await checkReach(none.loaded, none.layout, none.agents)).toEqual([
      { id: "reach", ok: true, title: "network and MCP servers", detail: "no agent has an allow list or MCP servers" },
    ]);
  });
});
