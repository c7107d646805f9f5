/**
 * The doctor's checks one by one, with their side effects handed in (statfs, a real
 * SQLite file in a temp folder): the faults that cannot be planted on this host for
 * the CLI test (an old Node, a full disk, a database from a newer version).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { checkDatabase } from "../../src/doctor/database-check.js";
import { checkDisk, MIN_FREE_DISK_BYTES } from "../../src/doctor/disk-check.js";
import { renderText } from "../../src/doctor/doctor-report.js";
import { checkNodeVersion } from "../../src/doctor/node-version-check.js";
import { failed, passed, skipped } from "../../src/doctor/check-result.js";
import { tempDir } from "../helpers/temp-dir.js";

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
    const roomy = { bavail: 10 * MIN_FREE_DISK_BYTES / 4096, bsize: 4096, files: 1_000_000, ffree: 900_000 };
    expect(checkDisk("/srv/ws", () => roomy)).toMatchObject({ ok: true, title: "disk space at /srv/ws (4.9 GiB free)" });
    const full = checkDisk("/srv/ws", () => ({ ...roomy, bavail: 100 }));
    expect(full).toMatchObject({ ok: false, detail: "only 400.0 KiB free (the doctor wants at least 500.0 MiB)" });
    expect(full.fix).toContain("/srv/ws");
    expect(checkDisk("/srv/ws", () => ({ ...roomy, ffree: 12 })).detail).toBe("only 12 inodes free: few new files can be created");
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
    expect(checkDatabase(file, existsSync, 5)).toMatchObject({ ok: true, title: `database ${file} (not created yet: \`laoding start\` creates it)` });
    expect(existsSync(file)).toBe(false);
    const db = new Database(file);
    db.pragma("user_version = 3");
    db.close();
    expect(checkDatabase(file, existsSync, 5)).toMatchObject({ ok: true, title: `database ${file} (quick_check ok, schema version 3; \`laoding start\` migrates it to 5)` });
    const newer = checkDatabase(file, existsSync, 2);
    expect(newer).toMatchObject({ ok: false, detail: "schema version 3 is newer than this code knows (2)" });
    expect(newer.fix).toMatch(/^Upgrade LaodingBot/);
  });

  it("the text report: ✓, ✗ with the fix indented, - for skipped, a summary, and secrets scrubbed", () => {
    const text = renderText([passed("node", "Node.js v20"), failed("model", "model m", "refused sk-secret-123", "Set LLM_API_KEY"), skipped("chat-bots", "chat bots", "the configuration is invalid, see above")], ["sk-secret-123"]);
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
});
