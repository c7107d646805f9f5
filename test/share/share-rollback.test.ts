/**
 * `laoding share rollback` through the real CLI, as root, on a real workspace whose share
 * went through `share apply`: the plan names the archive and what would change and writes
 * nothing; --apply refuses while a live process holds the bot's pid file, then restores
 * (the current share set aside, never deleted); a second rollback changes nothing; archives
 * with entries that would write or point outside the share are refused.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createWriteStream } from "node:fs";
import { dirname, join, relative } from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { createGzip } from "node:zlib";
import { Header } from "tar";
import { beforeAll, describe, expect, it } from "vitest";
import { readShareMoves, shareMovesFile } from "../../src/share/share-moves.js";
import { runLaoding } from "../helpers/cli.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

let workspace: RealWorkspace;
let backup: string;
let beforeApply: string;
const share = () => workspace.layout.shareDir;
const privateOf = (agent: string) => workspace.layout.agentTrees(agent).privateDir;
const rollback$ = (...args: string[]) =>
  runLaoding(["share", "rollback", ...args, "--workspace", workspace.workspaceDir], { repoRoot: workspace.repoRoot });
const setAside = () => readdirSync(dirname(share())).filter((name) => name.startsWith("share.migrated-"));

/** Names, types, modes, link texts and contents of a tree. */
function digest(root: string): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stats = lstatSync(path);
      hash.update(`${relative(root, path)} ${stats.mode.toString(8)} ${stats.size}\n`);
      if (stats.isSymbolicLink()) hash.update(readlinkSync(path));
      else if (stats.isDirectory()) walk(path);
      else hash.update(readFileSync(path));
    }
  };
  walk(root);
  return hash.digest("hex");
}

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
  writeFile(join(share(), "scripts", "deploy.sh"), "#!/bin/sh\necho deploy\n");
  writeFile(join(share(), "notes.txt"), "shared notes\n");
  workspace.launches();
  const mapping = writeFile(
    join(tempDir("laoding-map-", "file"), "mapping.json"),
    JSON.stringify({
      version: 1,
      items: [
        { path: "scripts", agents: ["a", "b"] },
        { path: "notes.txt", agents: ["a"] },
      ],
    }),
  );
  beforeApply = digest(share());
  const applied = await runLaoding(["share", "apply", "--mapping", mapping, "--workspace", workspace.workspaceDir], {
    repoRoot: workspace.repoRoot,
  });
  if (applied.code !== 0) throw new Error(applied.stderr);
  backup = /backup written: (\S+)/.exec(applied.stdout)?.[1] as string;
  // Life after the migration: the legacy notes edited, a new file in a's folder.
  writeFileSync(join(share(), "notes.txt"), "edited after the migration\n");
  writeFile(join(privateOf("a"), "mine.txt"), "written by a since\n");
}, 90_000);

describe("laoding share rollback", () => {
  it("plans by default: names the newest archive, what differs now and which agents' copies leave; changes nothing", async () => {
    const now = digest(share());
    const result = await rollback$();
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`archive ${backup}: `);
    expect(result.stdout).toContain(`differs             ${join(share(), "notes.txt")}`);
    expect(result.stdout).toContain(`only now            ${join(privateOf("a"), "mine.txt")}`);
    expect(result.stdout).toContain(`only now            ${join(privateOf("b"), "scripts", "deploy.sh")}`);
    expect(result.stdout).toMatch(new RegExp(`agent a: \\d+ entries under ${privateOf("a")} not in the archive`));
    expect(result.stdout).toMatch(/agent b: \d+ entries under/);
    expect(result.stdout).toContain("plan only: nothing was changed.");
    expect(digest(share())).toBe(now);
    expect(setAside()).toEqual([]);
  }, 60_000);

  it("--apply refuses while the bot's pid file names a live process, and changes nothing", async () => {
    const now = digest(share());
    const pidFile = join(workspace.layout.dataDir, "bot.pid");
    writeFileSync(pidFile, `${process.pid}\n`);
    try {
      const result = await rollback$("--apply");
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `the bot is running (pid ${process.pid}, recorded in ${pidFile}); stop it first: rollback stops nothing itself. Nothing was changed`,
      );
    } finally {
      rmSync(pidFile);
    }
    expect(digest(share())).toBe(now);
    expect(setAside()).toEqual([]);
  }, 60_000);

  it("--apply restores the archive, sets the current share aside, forgets the moves; a second rollback changes nothing", async () => {
    expect(readShareMoves(shareMovesFile(workspace.layout.dataDir)).length).toBe(3);
    const result = await rollback$("--archive", backup, "--apply");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `restored ${share()} from ${backup}; every entry checked against the archive by hash and mode`,
    );
    expect(result.stdout).toContain("next: laoding start");
    expect(digest(share())).toBe(beforeApply);
    const [aside, ...more] = setAside();
    expect(more).toEqual([]);
    const asideDir = join(dirname(share()), aside as string);
    expect(readFileSync(join(asideDir, "notes.txt"), "utf8")).toBe("edited after the migration\n");
    expect(readFileSync(join(asideDir, "agents", "a", "mine.txt"), "utf8")).toBe("written by a since\n");
    expect(readShareMoves(shareMovesFile(workspace.layout.dataDir))).toEqual([]);
    // No staging folder left beside the share.
    expect(readdirSync(dirname(share())).filter((name) => name.startsWith(".share.rollback-"))).toEqual([]);

    const again = await rollback$("--archive", backup, "--apply");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${share()} already matches ${backup}: nothing was changed`);
    expect(digest(share())).toBe(beforeApply);
    expect(setAside()).toEqual([aside]);
    expect((await rollback$()).stdout).toContain(
      "the share already matches the archive: a rollback would change nothing",
    );
  }, 90_000);

  /** A gzip'd tar of the given entries, written with node-tar's own headers (as a crafted archive would be). */
  async function craftedArchive(
    entries: { path: string; type: "File" | "Directory" | "SymbolicLink"; body?: string; linkpath?: string }[],
  ): Promise<string> {
    const blocks: Buffer[] = [];
    for (const entry of entries) {
      const body = Buffer.from(entry.body ?? "");
      const header = new Header({
        path: entry.path,
        type: entry.type,
        size: body.length,
        mode: entry.type === "Directory" ? 0o755 : 0o644,
        mtime: new Date(0),
        ...(entry.linkpath ? { linkpath: entry.linkpath } : {}),
      });
      header.encode();
      blocks.push(header.block as Buffer, body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
    blocks.push(Buffer.alloc(1024));
    const file = join(tempDir("laoding-crafted-"), "share-crafted.tar.gz");
    await pipeline(Readable.from([Buffer.concat(blocks)]), createGzip(), createWriteStream(file));
    return file;
  }

  it.each([
    [
      "a `../` entry",
      { path: "share/../escaped.txt", type: "File" as const, body: "x" },
      "share/../escaped.txt: a `..` segment (it would write outside the share)",
    ],
    [
      "an absolute path",
      { path: "/tmp/laoding-absolute.txt", type: "File" as const, body: "x" },
      "/tmp/laoding-absolute.txt: an absolute path (a restore writes only below the share)",
    ],
    [
      "a link pointing outside",
      { path: "share/agents/a/passwd", type: "SymbolicLink" as const, linkpath: "/etc/passwd" },
      "share/agents/a/passwd: a link to /etc/passwd, which is outside the share (an absolute target)",
    ],
    [
      "a relative link climbing out",
      { path: "share/up", type: "SymbolicLink" as const, linkpath: "../data/laoding.db" },
      "share/up: a link to ../data/laoding.db, which leads outside the share",
    ],
  ])(
    "refuses an archive with %s, in the plan and with --apply, changing nothing",
    async (_label, bad, message) => {
      const archive = await craftedArchive([
        { path: "share/", type: "Directory" },
        { path: "share/ok.txt", type: "File", body: "fine\n" },
        bad,
      ]);
      const now = digest(share());
      for (const args of [
        ["--archive", archive],
        ["--archive", archive, "--apply"],
      ]) {
        const result = await rollback$(...args);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`the archive ${archive} is refused, nothing was changed: 1 unsafe entry:`);
        expect(result.stderr).toContain(message);
      }
      expect(digest(share())).toBe(now);
      expect(existsSync(join(dirname(share()), "escaped.txt"))).toBe(false);
      expect(existsSync("/tmp/laoding-absolute.txt")).toBe(false);
    },
    60_000,
  );
});
