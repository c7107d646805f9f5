/**
 * A Go-era `skill.md` without frontmatter left in `skills/` loads in place (no import):
 * name from its folder, description from its 触发背景 section, first paragraph or first
 * heading, with one warning; our own SKILL.md without frontmatter is still invalid.
 */
import { Writable } from "node:stream";
import { join } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { deriveGoEraDescription } from "../../src/knowledge/go-era-skill.js";
import { SkillCatalog } from "../../src/knowledge/skill-catalog.js";
import { tempDir, writeFile } from "../helpers/temp-dir.js";

function recordingLogger() {
  const lines: { msg: string; path?: string; descriptionFrom?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString("utf8")));
      done();
    },
  });
  return { logger: pino({ level: "warn" }, stream), lines };
}

describe("Go-era skills without frontmatter", () => {
  it("load in place under their folder's name, with a warning once", () => {
    const dir = tempDir();
    writeFile(
      join(dir, "weather_report", "skill.md"),
      "# 天气播报\n\n介绍天气。\n\n## 触发背景\n用户询问某个城市的天气时使用。\n\n## 步骤\n1. 查询\n",
    );
    writeFile(
      join(dir, "backup", "skill.md"),
      "# Nightly backup\n\nCopy the database to the backup host every night.\n",
    );
    writeFile(join(dir, "title_only", "skill.md"), "# 只有标题\n");
    writeFile(join(dir, "ours", "SKILL.md"), "no frontmatter in our own format\n");
    const { logger, lines } = recordingLogger();
    const catalog = new SkillCatalog([{ dir, source: "base" }], logger);
    const snapshot = catalog.snapshot;
    expect(snapshot.get("weather-report")).toMatchObject({
      description: "用户询问某个城市的天气时使用。",
      goEraFolder: "weather_report",
      derivedFrom: "触发背景",
    });
    expect(snapshot.get("weather-report")?.body).toContain("## 步骤");
    expect(snapshot.get("backup")).toMatchObject({
      description: "Copy the database to the backup host every night.",
      derivedFrom: "paragraph",
    });
    expect(snapshot.get("title-only")).toMatchObject({ description: "只有标题", derivedFrom: "heading" });
    expect(snapshot.get("ours")).toBeUndefined();
    expect(snapshot.problems).toEqual([expect.objectContaining({ path: join(dir, "ours", "SKILL.md") })]);
    const warnings = lines.filter((line) => line.msg.startsWith("Go-era skill without frontmatter"));
    expect(warnings.map((line) => line.descriptionFrom).sort()).toEqual(["heading", "paragraph", "触发背景"]);
    catalog.reload();
    expect(lines.filter((line) => line.msg.startsWith("Go-era skill without frontmatter"))).toHaveLength(3);
  });

  it("derives a description from the body when nothing else is there", () => {
    expect(deriveGoEraDescription("\n\n", "empty_one")).toEqual({
      description: "empty_one (from the Go LaodingBot)",
      from: "folder",
    });
    expect(deriveGoEraDescription("- first step\n- second step\n", "list")).toEqual({
      description: "first step second step",
      from: "paragraph",
    });
  });
});
