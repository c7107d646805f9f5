/**
 * The bot, as root, gives each agent its trees (owner and mode) at start-up, at a re-plan
 * for a library switch and before `laoding library` runs. The agent writes those trees,
 * and its commands may still run meanwhile: whatever it left there (links, a link in
 * place of a tree) or swaps while the walk runs, root must never change anything outside
 * the agent's trees (review findings A1 and A2 of issue 8).
 */
import { spawn } from "node:child_process";
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { secureWorkspace, type TreeLayout } from "../../src/toolhost/sandbox/agent-trees.js";
import { planChildLaunch } from "../../src/toolhost/sandbox/child-launch.js";
import { outermostPaths } from "../../src/toolhost/sandbox/command-launchers.js";
import { tempDir } from "../helpers/temp-dir.js";

const isRoot = process.getuid?.() === 0;
const UID = 41_234;

function workspace() {
  const root = tempDir("laoding-trees-");
  const layout: TreeLayout = {
    workspaceDir: root,
    workRoot: join(root, "workspace"),
    shareDir: join(root, "share"),
    experienceRoot: join(root, "share", "agent-experience"),
    agentsPrivateRoot: join(root, "share", "agents"),
    baseSkillsDir: join(root, "skills"),
    privateDirs: [join(root, "data")],
  };
  mkdirSync(join(root, "data"), { mode: 0o755 });
  const privateDir = join(layout.agentsPrivateRoot, "a");
  const trees = [join(layout.workRoot, "a"), join(layout.experienceRoot, "a"), privateDir, join(privateDir, "skills")];
  const owners = [{ agentId: "a", uid: UID, trees }];
  // A root-only folder outside the workspace: what an attacker points links at.
  const canary = tempDir("laoding-canary-");
  chmodSync(canary, 0o700);
  for (let index = 0; index < 50; index += 1) writeFileSync(join(canary, `f${index}`), "ROOT-ONLY\n", { mode: 0o600 });
  mkdirSync(join(canary, "sub"), { mode: 0o700 });
  const canaryState = () =>
    [canary, ...readdirSync(canary).map((name) => join(canary, name))]
      .map((path) => {
        const stats = lstatSync(path);
        return `${path}:${stats.uid}:${stats.gid}:${(stats.mode & 0o7777).toString(8)}`;
      })
      .join("\n");
  return { layout, trees, owners, privateDir, canary, canaryState };
}

describe.runIf(isRoot)("giving an agent its trees as root", () => {
  it("owns every entry to the agent, changes links themselves only, and leaves hard-linked files alone", () => {
    const { layout, trees, owners, canary, canaryState } = workspace();
    const work = trees[0] as string;
    mkdirSync(join(work, "chat", "deep"), { recursive: true });
    writeFileSync(join(work, "chat", "deep", "note.md"), "hi");
    symlinkSync(canary, join(work, "chat", "to-canary"));
    linkSync(join(canary, "f1"), join(work, "chat", "hard"));
    const before = canaryState();

    const report = secureWorkspace(layout, owners);

    for (const tree of trees) expect(statSync(tree)).toMatchObject({ uid: UID, gid: UID, mode: expect.any(Number) });
    for (const tree of trees) expect(statSync(tree).mode & 0o777).toBe(0o700);
    expect(statSync(join(work, "chat", "deep", "note.md")).uid).toBe(UID);
    expect(lstatSync(join(work, "chat", "to-canary")).uid).toBe(UID);
    expect(statSync(join(work, "chat", "hard")).uid).toBe(0);
    expect(report.warnings.join("\n")).toMatch(/agent a: left 1 file\(s\) with several hard links/);
    expect(canaryState()).toBe(before);
    expect(statSync(layout.workRoot).mode & 0o777).toBe(0o711);
    expect(statSync(join(layout.workspaceDir, "data")).mode & 0o777).toBe(0o700);
  });

  it("a tree the agent replaced by a link is moved aside and made anew; the link's target keeps its owner and mode (A2)", () => {
    const { layout, owners, privateDir, canary, canaryState } = workspace();
    secureWorkspace(layout, owners);
    const skills = join(privateDir, "skills");
    // The agent owns its private area, so it can put a link where its skills were.
    rmSync(skills, { recursive: true });
    symlinkSync(canary, skills);
    const before = canaryState();

    const report = secureWorkspace(layout, owners, () => new Date("2026-12-02T01:02:03.004Z"));

    expect(canaryState()).toBe(before);
    expect(lstatSync(skills).isDirectory()).toBe(true);
    expect(statSync(skills)).toMatchObject({ uid: UID });
    const aside = join(privateDir, "skills.moved-2026-12-02T01-02-03-004Z");
    expect(lstatSync(aside).isSymbolicLink()).toBe(true);
    expect(report.warnings.join("\n")).toContain(
      `agent a: ${skills} was not a folder (a link to ${canary}); moved it aside to skills.moved-2026-12-02T01-02-03-004Z`,
    );
  });

  it("never changes a host folder while the agent swaps a folder of its tree with a link to it (A1)", async () => {
    const { layout, trees, owners, canary, canaryState } = workspace();
    const work = trees[0] as string;
    // Many entries below the swapped folder keep the walk busy inside it.
    mkdirSync(join(work, "d1"), { recursive: true });
    for (let index = 0; index < 200; index += 1) writeFileSync(join(work, "d1", `n${index}`), "x");
    symlinkSync(canary, join(work, "l1"));
    secureWorkspace(layout, owners);
    const before = canaryState();

    const swapper = spawn("python3", ["-c", SWAPPER, "3"], { cwd: work, stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    swapper.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const done = new Promise<number | null>((resolve) => swapper.on("exit", resolve));
    let walks = 0;
    let running = true;
    void done.then(() => (running = false));
    while (running) {
      // Files the swap put back under root's name again, so every walk has work to do.
      secureWorkspace(layout, [{ ...owners[0]!, uid: walks % 2 === 0 ? UID : UID + 1 }]);
      walks += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await done).toBe(0);
    const swaps = Number(/swaps (\d+)/.exec(output)?.[1]);
    expect(swaps).toBeGreaterThan(1_000);
    expect(walks).toBeGreaterThan(5);
    expect(canaryState()).toBe(before);
  }, 30_000);
});

describe("binding trees into a sandbox", () => {
  it("a tree inside another bound tree is not bound again (a link left at its name would be followed)", () => {
    expect(outermostPaths(["/s/agents/a", "/s/agents/a/skills", "/w/a", "/w/ab", "/w/a"])).toEqual([
      "/s/agents/a",
      "/w/a",
      "/w/ab",
    ]);
    const launch = planChildLaunch({
      startup: {
        version: 1,
        agentId: "a",
        roots: [
          { path: "/s/agents/a", writable: true, label: "private area" },
          { path: "/s/agents/a/skills", writable: true, label: "own skills" },
        ],
        workTree: "/w/a",
        sessionLink: { name: "团队经验" },
        allowedCommands: [],
        limits: {
          outputMaxBytes: 1,
          shellTimeoutMs: 1,
          shellMaxTimeoutMs: 1,
          readMaxBytes: 1,
          listMaxEntries: 1,
          grepMaxMatches: 1,
        },
        commandSandbox: "bwrap",
        bwrapPath: "/usr/bin/bwrap",
        network: false,
        tmpSizeBytes: 1,
        memoryLimitBytes: 1,
        maxFrameBytes: 1,
        logLevel: "error",
      } as never,
      node: { execPath: "/usr/bin/node", args: ["child.js"] },
      codePaths: [],
      jail: true,
    });
    const binds = launch.args.flatMap((arg, index) => (arg === "--bind" ? [launch.args[index + 1]] : []));
    expect(binds).toEqual(["/s/agents/a"]);
  });
});

const SWAPPER = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
end = time.time() + float(sys.argv[1])
swaps = 0
while time.time() < end:
    if libc.renameat2(AT_FDCWD, b"d1", AT_FDCWD, b"l1", RENAME_EXCHANGE) == 0:
        swaps += 1
print("swaps", swaps)
`;
