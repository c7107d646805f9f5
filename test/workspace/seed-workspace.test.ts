import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

describe("laoding init", () => {
  it("creates the full runtime layout in a fresh workspace", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = join(tempDir(), "rt");
    const run = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    expect(run.code).toBe(0);
    for (const path of [
      "configs/env",
      "configs/agents.json",
      "bot_context/soul.md",
      "skills/skill-builder/SKILL.md",
      "data",
      "share/README.md",
      "share/agent-experience/main",
      "share/agents/main/skills",
      "workspace/main",
    ]) {
      expect(existsSync(join(workspaceDir, path)), path).toBe(true);
    }
    expect(run.stdout).toContain("copied   skills/skill-builder/SKILL.md");
    expect(readFileSync(join(workspaceDir, "skills/skill-builder/SKILL.md"), "utf8")).toMatch(
      /^---\nname: skill-builder\n/,
    );
  });

  it("copies nothing on a second run and says so", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = tempDir();
    await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    const second = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain("copied");
    expect(second.stdout).toContain("kept     configs/env (exists, not overwritten)");
    expect(second.stdout).toContain("nothing to do");
  });

  it("never overwrites an edited file and restores a missing one", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = tempDir();
    await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    const soul = join(workspaceDir, "bot_context/soul.md");
    writeFileSync(soul, "# my own persona\n");
    rmSync(join(workspaceDir, "skills/skill-builder/SKILL.md"));
    const again = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
    expect(readFileSync(soul, "utf8")).toBe("# my own persona\n");
    expect(again.stdout).toContain("copied   skills/skill-builder/SKILL.md");
    expect(again.stdout.match(/^ +copied /gm)).toHaveLength(1);
    expect(existsSync(join(workspaceDir, "skills/skill-builder/SKILL.md"))).toBe(true);
  });

  it("puts the share README into SHARE_DIR and creates every agent's trees", async () => {
    const repoRoot = fakeRepo();
    const workspaceDir = tempDir();
    writeFileSync(
      join(repoRoot, "configs/agents.json"),
      JSON.stringify({
        agents: [
          { id: "ops", name: "Ops" },
          { id: "dev", name: "Dev" },
        ],
      }),
    );
    const run = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot, env: { SHARE_DIR: "common" } });
    expect(run.code).toBe(0);
    expect(existsSync(join(workspaceDir, "common/README.md"))).toBe(true);
    for (const id of ["ops", "dev"]) {
      expect(existsSync(join(workspaceDir, "common/agents", id, "skills"))).toBe(true);
      expect(existsSync(join(workspaceDir, "common/agent-experience", id))).toBe(true);
      expect(existsSync(join(workspaceDir, "workspace", id))).toBe(true);
    }
  });
});
