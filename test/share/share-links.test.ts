/**
 * `laoding share` (run as root) against links an agent planted in the legacy share, in the
 * Go-era skills folder and in its own tree, each pointing at a root-only secret outside
 * the workspace: the plan names every link as a conflict (never its target), apply copies
 * nothing, and the backup stores links as links, even one swapped in mid-walk.
 */
import fs, {
  chmodSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  lstatSync,
  renameSync,
  statSync,
  symlinkSync,
  type Stats,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { list } from "tar";
import { beforeAll, describe, expect, it } from "vitest";
import { writeShareBackup } from "../../src/share/share-backup.js";
import { runLaoding } from "../helpers/cli.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

const SECRET = "TOP-SECRET-root-only-7f3a9c";

let workspace: RealWorkspace;
let secretRoot: string;
let secretDir: string;
let secretFile: string;
const share = () => workspace.layout.shareDir;
const agentTree = (agent: string) => workspace.layout.agentTrees(agent).privateDir;

const share$ = (action: string, mapping: object) => {
  const file = writeFile(join(tempDir("laoding-map-"), "mapping.json"), JSON.stringify({ version: 1, ...mapping }));
  return runLaoding(["share", action, "--mapping", file, "--workspace", workspace.workspaceDir], {
    repoRoot: workspace.repoRoot,
  });
};

/** Every file's text below `root`, not following links (what an agent's tree now holds). */
function texts(root: string): string {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .map((name) => join(root, name))
    .filter((path) => lstatSync(path).isFile())
    .map((path) => readFileSync(path, "utf8"))
    .join("\n");
}

/** The text of a Go-era skill whose body is the secret: valid, so the old plan copied it. */
const skillText = (name: string) => `---\nname: ${name}\ndescription: looks harmless\n---\n${SECRET}\n`;

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
  secretRoot = tempDir("laoding-secret-", "file");
  secretDir = join(secretRoot, "secret-dir");
  secretFile = writeFile(join(secretRoot, "secret"), skillText("auto_evil"));
  writeFile(join(secretDir, "file"), `${SECRET}\n`);
  writeFile(join(secretDir, "skill.md"), skillText("auto_evil_dir"));
  for (const file of [secretFile, join(secretDir, "file"), join(secretDir, "skill.md")]) chmodSync(file, 0o600);
  chmodSync(secretDir, 0o700);
  // Links at depth 0, 1 and 2 of the legacy share, each on the way to a mapped path.
  symlinkSync(secretDir, join(share(), "linkdir"));
  mkdirSync(join(share(), "d1", "d2"), { recursive: true });
  symlinkSync(secretDir, join(share(), "d1", "linkdir"));
  symlinkSync(secretDir, join(share(), "d1", "d2", "linkdir"));
  workspace.launches();
}, 60_000);

/** Nothing an agent or the operator is shown may name where a link leads. */
function expectNoTarget(result: { stdout: string; stderr: string }): void {
  expect(result.stdout + result.stderr).not.toContain(secretRoot);
  expect(result.stdout + result.stderr).not.toContain(SECRET);
}

describe("laoding share with planted links", () => {
  const goSkills = () => join(tempDir("laoding-go-"), "skills");
  const attack = (dir: string) => ({
    items: ["linkdir/file", "d1/linkdir/file", "d1/d2/linkdir/file"].map((path) => ({ path, agents: ["a"] })),
    goSkills: { dir, drafts: [{ name: "auto_evil", agent: "a" }] },
  });
  const evilSkills = () => {
    const dir = goSkills();
    mkdirSync(join(dir, "auto_evil"), { recursive: true });
    symlinkSync(secretFile, join(dir, "auto_evil", "skill.md"));
    return dir;
  };

  it("plan names each link on the way to a mapped path and each linked skill.md, never their targets, and plans no copy through them", async () => {
    const result = await share$("plan", attack(evilSkills()));
    expect(result.code).toBe(0);
    for (const link of ["linkdir", "d1/linkdir", "d1/d2/linkdir"]) {
      expect(result.stdout).toContain(
        `  - ${join(share(), link)}: a link is neither followed nor copied (it is on the way to ${link}/file)`,
      );
    }
    expect(result.stdout).toMatch(/auto_evil\/skill\.md: a link is neither followed nor copied/);
    expect(result.stdout).toContain("plan only: nothing was written. 0 file(s) to copy.");
    expect(result.stdout).not.toContain("Next: laoding share apply");
    expectNoTarget(result);
  }, 60_000);

  it("apply refuses: no secret lands in the agent's tree or skills, and no backup is made", async () => {
    const result = await share$("apply", attack(evilSkills()));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("nothing was copied: the plan has 4 conflict(s)");
    expectNoTarget(result);
    expect(texts(agentTree("a"))).not.toContain(SECRET);
    expect(() => statSync(join(workspace.layout.dataDir, "share-backups"))).toThrow();
  }, 60_000);

  it("a linked skill folder, a linked file, a link deep in a mapped folder and a linked goSkills.dir are conflicts named by their paths", async () => {
    const dir = goSkills();
    mkdirSync(dir, { recursive: true });
    symlinkSync(secretDir, join(dir, "auto_evil_dir"));
    symlinkSync(secretFile, join(share(), "linked.txt"));
    writeFile(join(share(), "tree", "x", "ok.txt"), "fine\n");
    symlinkSync(secretDir, join(share(), "tree", "x", "linkdir"));
    const result = await share$("plan", {
      items: [
        { path: "linked.txt", agents: ["a"] },
        { path: "tree", agents: ["a"] },
      ],
      goSkills: { dir, drafts: [{ name: "auto_evil_dir", agent: "a" }] },
    });
    expect(result.stdout).toContain(
      `  - ${join(dir, "auto_evil_dir")}: a linked skill folder is not followed; replace the link with a real folder`,
    );
    expect(result.stdout).not.toContain("has no skill.md");
    expect(result.stdout).toContain(`  - ${join(share(), "linked.txt")}: a link is neither followed nor copied`);
    expect(result.stdout).toContain(
      `  - ${join(share(), "tree", "x", "linkdir")}: a link is neither followed nor copied`,
    );
    expect(result.stdout).toContain(
      `copy      ${join(share(), "tree", "x", "ok.txt")} -> ${join(agentTree("a"), "tree", "x", "ok.txt")}`,
    );
    expectNoTarget(result);

    // The skills folder itself a link to a folder of drafts: refused, not read through.
    const real = join(secretRoot, "go-skills");
    writeFile(join(real, "auto_evil", "skill.md"), skillText("auto_evil"));
    chmodSync(join(real, "auto_evil", "skill.md"), 0o600);
    const linked = join(tempDir("laoding-go-link-"), "skills");
    symlinkSync(real, linked);
    // Given with a trailing slash, which makes the kernel follow a final link.
    const apply = await share$("apply", {
      goSkills: { dir: `${linked}/`, drafts: [{ name: "auto_evil", agent: "a" }] },
    });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain(
      `${linked}: the Go-era skills folder is a link, which is not followed; set goSkills.dir to the real folder`,
    );
    expectNoTarget(apply);
    expect(texts(agentTree("a"))).not.toContain(SECRET);
  }, 60_000);

  it("with a link on the way to an item, verify fails and cleanup refuses: nothing is removed through the link", async () => {
    const mapping = { items: [{ path: "linkdir/file", agents: ["b"] }] };
    expect(await share$("apply", mapping)).toMatchObject({ code: 1 });
    const verify = await share$("verify", mapping);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`  - ${join(share(), "linkdir")}: a link is neither followed nor copied`);
    expect(verify.stdout).toContain("verify FAILED");
    expectNoTarget(verify);
    const cleanup = await share$("cleanup", mapping);
    expect(cleanup.code).toBe(1);
    expectNoTarget(cleanup);
    expect(readFileSync(join(secretDir, "file"), "utf8")).toBe(`${SECRET}\n`);
    expect(lstatSync(join(share(), "linkdir")).isSymbolicLink()).toBe(true);
  }, 90_000);

  it("the backup stores an agent's planted links as links, and reads nothing through a file or folder swapped for a link mid-walk", async () => {
    const tree = agentTree("b");
    symlinkSync(secretFile, join(tree, "planted-file"));
    symlinkSync(secretDir, join(tree, "planted-dir"));
    // As large as the secret file, so a read through the swapped-in link would take all of it.
    const notes = "x".repeat(`${SECRET}\n`.length);
    writeFile(join(tree, "swap", "notes.txt"), notes);
    writeFile(join(tree, "swapdir", "keep.txt"), "mine\n");
    const swaps = swapOnFirstLook(
      [join(tree, "swap", "notes.txt"), join(secretDir, "file")],
      [join(tree, "swapdir"), secretDir],
    );
    // The backup apply writes (called directly: apply's launch of the toolhosts first walks
    // the agents' trees itself, and would look at the names before the backup does).
    let backup: string;
    try {
      backup = await writeShareBackup(share(), join(workspace.layout.dataDir, "share-backups"), new Date());
    } finally {
      swaps.restore();
    }
    // Both swaps were made, after the backup first looked at each name.
    expect(swaps.done.sort()).toEqual([join(tree, "swap", "notes.txt"), join(tree, "swapdir")]);
    const entries = new Map<string, { type: string; linkpath?: string; body: string }>();
    await list({
      file: backup,
      onReadEntry: (entry) => {
        const chunks: Buffer[] = [];
        entry.on("data", (chunk: Buffer) => chunks.push(chunk));
        entry.on("end", () =>
          entries.set(entry.path, {
            type: entry.type,
            linkpath: entry.linkpath,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    });
    const inTree = (name: string) => entries.get(`share/agents/b/${name}`);
    expect(inTree("planted-file")).toMatchObject({ type: "SymbolicLink", linkpath: secretFile, body: "" });
    expect(inTree("planted-dir")).toMatchObject({ type: "SymbolicLink", linkpath: secretDir, body: "" });
    expect(inTree("swap/notes.txt")).toMatchObject({ type: "File", body: notes });
    expect(inTree("swapdir/file")).toBeUndefined();
    expect([...entries.values()].map((entry) => entry.body).join("\n")).not.toContain(SECRET);
  }, 60_000);
});

/**
 * Plays the agent's race deterministically: the first time the process looks at one of
 * the `[path, target]` names (any lstat or fstat that returns its inode), the name is
 * moved aside within its folder and replaced by a link to `target`, as renameat2 would
 * do between the backup's look and its read.
 */
function swapOnFirstLook(...pairs: [string, string][]): { done: string[]; restore: () => void } {
  const pending = new Map(
    pairs.map(([path, target]) => [`${statSync(path).dev}:${statSync(path).ino}`, { path, target }]),
  );
  const done: string[] = [];
  const swap = (stats: Stats | undefined) => {
    const key = stats ? `${stats.dev}:${stats.ino}` : "";
    const found = pending.get(key);
    if (!found) return;
    pending.delete(key);
    renameSync(found.path, `${found.path}.aside`);
    symlinkSync(found.target, found.path);
    done.push(found.path);
  };
  const { lstat, fstatSync } = fs;
  const patched = {
    lstat: ((path: fs.PathLike, ...rest: unknown[]) => {
      const callback = rest.pop() as (error: NodeJS.ErrnoException | null, stats?: Stats) => void;
      return lstat(path, ...(rest as []), (error: NodeJS.ErrnoException | null, stats?: Stats) => {
        if (!error) swap(stats);
        callback(error, stats);
      });
    }) as typeof fs.lstat,
    fstatSync: ((fd: number, options?: fs.StatSyncOptions) => {
      const stats = fstatSync(fd, options) as Stats;
      swap(stats);
      return stats;
    }) as typeof fs.fstatSync,
  };
  Object.assign(fs, patched);
  syncBuiltinESMExports();
  return {
    done,
    restore: () => {
      Object.assign(fs, { lstat, fstatSync });
      syncBuiltinESMExports();
    },
  };
}
