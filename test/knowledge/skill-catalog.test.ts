import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { parseFrontmatter } from "../../src/knowledge/frontmatter.js";
import { SkillCatalog } from "../../src/knowledge/skill-catalog.js";
import { tempDir } from "../helpers/temp-dir.js";

const logger = pino({ level: "silent" });

function writeSkill(root: string, folder: string, frontmatter: string, file = "SKILL.md", body = "Steps.") {
  mkdirSync(join(root, folder), { recursive: true });
  writeFileSync(join(root, folder, file), `---\n${frontmatter}\n---\n\n${body}\n`);
}

describe("frontmatter", () => {
  it("reads scalars, quotes, inline and block lists, folded text; tolerates unknown shapes", () => {
    const result = parseFrontmatter(
      '---\nname: x\ntitle: "Quoted: yes"\nkeywords: [docker, 部署，compose]\ntags:\n  - a\n  - b\nsummary: >\n  folded\n  text\nweird line\n---\nBody\n',
    );
    expect(result).toEqual({
      ok: true,
      value: {
        data: {
          name: "x",
          title: "Quoted: yes",
          keywords: ["docker", "部署", "compose"],
          tags: ["a", "b"],
          summary: "folded text",
        },
        body: "Body\n",
      },
    });
    expect(parseFrontmatter("no frontmatter")).toEqual({ ok: true, value: { data: {}, body: "no frontmatter" } });
    expect(parseFrontmatter("---\nname: x\nno end")).toMatchObject({ ok: false });
  });
});

describe("skill catalog", () => {
  it("loads base and agent skills, reads legacy skill.md, skips invalid ones with path and reason", () => {
    const base = tempDir();
    const own = tempDir();
    writeSkill(base, "deploy-docker", "name: deploy-docker\ndescription: Deploy with Docker");
    writeSkill(base, "legacy-one", "name: legacy-one\ndescription: Old lowercase file", "skill.md");
    writeSkill(base, "Bad", "name: Bad\ndescription: x");
    writeSkill(base, "mismatch", "name: other-name\ndescription: x");
    writeSkill(base, "no-description", "name: no-description");
    writeSkill(
      own,
      "draft-one",
      "name: draft-one\ndescription: A draft\nstatus: draft\norigin: gap\nintent_key: draft-one",
    );
    const catalog = new SkillCatalog(
      [
        { dir: base, source: "base" },
        { dir: own, source: "agent" },
      ],
      logger,
    );
    const snapshot = catalog.snapshot;
    expect(snapshot.skills.map((skill) => skill.name)).toEqual(["deploy-docker", "draft-one", "legacy-one"]);
    expect(snapshot.get("draft-one")).toMatchObject({
      status: "draft",
      origin: "gap",
      intentKey: "draft-one",
      source: "agent",
    });
    expect(snapshot.problems.map((problem) => [problem.path.slice(base.length + 1), problem.reason])).toEqual([
      ["Bad/SKILL.md", "name must be lowercase letters, digits and single hyphens"],
      ["mismatch/SKILL.md", 'name "other-name" does not match its folder "mismatch"'],
      ["no-description/SKILL.md", expect.stringMatching(/^description /)],
    ]);
  });

  it("an agent's own skill wins a name clash", () => {
    const base = tempDir();
    const own = tempDir();
    writeSkill(base, "notes", "name: notes\ndescription: base version");
    writeSkill(own, "notes", "name: notes\ndescription: agent version");
    const snapshot = new SkillCatalog(
      [
        { dir: base, source: "base" },
        { dir: own, source: "agent" },
      ],
      logger,
    ).snapshot;
    expect(snapshot.get("notes")).toMatchObject({ description: "agent version", source: "agent" });
    expect(snapshot.shadowed).toEqual(["notes"]);
  });

  it("reload swaps a new versioned snapshot atomically and reports the changes; old snapshots stay intact", () => {
    const base = tempDir();
    writeSkill(base, "one", "name: one\ndescription: first");
    writeSkill(base, "two", "name: two\ndescription: second");
    const catalog = new SkillCatalog([{ dir: base, source: "base" }], logger);
    const before = catalog.snapshot;
    writeSkill(base, "one", "name: one\ndescription: first, changed");
    rmSync(join(base, "two"), { recursive: true });
    writeSkill(base, "three", "name: three\ndescription: third");
    const changes = catalog.reload();
    expect(changes).toEqual({ added: ["three"], changed: ["one"], removed: ["two"], invalid: [] });
    expect(catalog.snapshot.version).toBe(before.version + 1);
    expect(before.skills.map((skill) => skill.name)).toEqual(["one", "two"]);
    expect(before.get("one")?.description).toBe("first");
    expect(Object.isFrozen(before.skills)).toBe(true);
  });
});

describe("reading an agent's own skills folder", () => {
  it("never follows a SKILL.md link or a linked skill folder out of the skills folder", () => {
    const root = tempDir();
    const own = join(root, "own");
    const elsewhere = join(root, "elsewhere");
    mkdirSync(join(elsewhere, "stolen"), { recursive: true });
    writeFileSync(join(elsewhere, "stolen", "SKILL.md"), "---\nname: stolen\ndescription: HOST-SECRET\n---\nbody\n");
    mkdirSync(join(own, "linked-file"), { recursive: true });
    symlinkSync(join(elsewhere, "stolen", "SKILL.md"), join(own, "linked-file", "SKILL.md"));
    symlinkSync(join(elsewhere, "stolen"), join(own, "linked-folder"));
    const catalog = new SkillCatalog([{ dir: own, source: "agent" }], pino({ level: "silent" }));
    expect(catalog.snapshot.skills.map((skill) => skill.name)).toEqual([]);
    expect(JSON.stringify(catalog.snapshot)).not.toContain("HOST-SECRET");
    expect(catalog.snapshot.problems).toEqual([
      {
        path: join(own, "linked-file", "SKILL.md"),
        reason: "the file is a link; skills are read only from real files",
      },
    ]);
  });
});

describe("Go-era skills", () => {
  it("load under the Agent Skills form of their name, warned once per skill, folders untouched; a clash is skipped naming both", () => {
    const base = tempDir();
    writeSkill(base, "skill_builder", "name: skill_builder\ndescription: Go-era builder", "skill.md");
    writeSkill(base, "auto_export_report", "description: Go-era draft without a name", "skill.md");
    writeSkill(base, "deploy-docker", "name: deploy-docker\ndescription: current");
    writeSkill(base, "deploy_docker", "name: deploy_docker\ndescription: Go-era twin", "skill.md");
    const warnings: { path?: string; skippedFor?: string; msg: string }[] = [];
    const recording = pino(
      { level: "warn" },
      { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string }) },
    );
    const catalog = new SkillCatalog([{ dir: base, source: "base" }], recording);
    const snapshot = catalog.snapshot;
    expect(snapshot.skills.map((skill) => skill.name)).toEqual([
      "auto-export-report",
      "deploy-docker",
      "skill-builder",
    ]);
    expect(snapshot.get("skill-builder")).toMatchObject({
      goEraFolder: "skill_builder",
      path: join(base, "skill_builder", "skill.md"),
    });
    expect(snapshot.get("deploy-docker")).toMatchObject({ description: "current" });
    expect(snapshot.problems).toEqual([]);
    expect(snapshot.goEra).toContainEqual({
      path: join(base, "deploy_docker", "skill.md"),
      folder: "deploy_docker",
      name: "deploy-docker",
      skippedFor: join(base, "deploy-docker", "SKILL.md"),
    });
    catalog.reload();
    catalog.reload();
    expect(
      warnings
        .filter((warning) => warning.msg.startsWith("Go-era skill loaded"))
        .map((warning) => warning.path)
        .sort(),
    ).toEqual([join(base, "auto_export_report", "skill.md"), join(base, "skill_builder", "skill.md")]);
    expect(warnings.filter((warning) => warning.msg.startsWith("Go-era skill skipped"))).toHaveLength(1);
    expect(readdirSync(base).sort()).toEqual(["auto_export_report", "deploy-docker", "deploy_docker", "skill_builder"]);
  });
});
