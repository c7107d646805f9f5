/**
 * An agent's skill catalog: base skills first, then the agent's own folder, where a
 * name clash is resolved in favour of the agent's own (and logged). The catalog is an
 * immutable, versioned snapshot; `reload()` builds a new one and swaps it atomically,
 * so a turn in flight keeps the snapshot it started with. A reload that finds broken
 * skills still succeeds with the good ones and reports the rest.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { readSkillFile, type Skill, type SkillProblem } from "./skill.js";

export type SkillSnapshot = {
  readonly version: number;
  readonly skills: readonly Skill[];
  readonly problems: readonly SkillProblem[];
  /** Skills of the agent that shadow a base skill of the same name. */
  readonly shadowed: readonly string[];
  get(name: string): Skill | undefined;
};

export type SkillChanges = { added: string[]; changed: string[]; removed: string[]; invalid: SkillProblem[] };

export type SkillSource = { dir: string; source: Skill["source"] };

export class SkillCatalog {
  private current: SkillSnapshot;

  constructor(
    private readonly sources: SkillSource[],
    private readonly logger: Logger,
  ) {
    this.current = buildSnapshot(sources, 1, logger);
  }

  get snapshot(): SkillSnapshot {
    return this.current;
  }

  /** Builds a new snapshot from disk and swaps it in; returns what changed. */
  reload(): SkillChanges {
    const previous = this.current;
    const next = buildSnapshot(this.sources, previous.version + 1, this.logger);
    this.current = next;
    return diff(previous, next);
  }
}

function buildSnapshot(sources: SkillSource[], version: number, logger: Logger): SkillSnapshot {
  const byName = new Map<string, Skill>();
  const problems: SkillProblem[] = [];
  const shadowed: string[] = [];
  for (const { dir, source } of sources) {
    for (const path of skillFiles(dir)) {
      const result = readSkillFile(path, source);
      if (!result.ok) {
        problems.push({ path, reason: result.error });
        logger.warn({ path, reason: result.error }, "skipping an invalid skill");
        continue;
      }
      const existing = byName.get(result.value.name);
      if (existing) {
        shadowed.push(result.value.name);
        logger.info({ name: result.value.name, kept: path, shadowed: existing.path }, "agent skill overrides a base skill of the same name");
      }
      byName.set(result.value.name, result.value);
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return Object.freeze({ version, skills: Object.freeze(skills), problems: Object.freeze(problems), shadowed: Object.freeze(shadowed), get: (name: string) => byName.get(name) });
}

/** SKILL.md (or a legacy lowercase skill.md) in each immediate subfolder. */
function skillFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      for (const file of ["SKILL.md", "skill.md"]) {
        const path = join(dir, entry.name, file);
        if (existsSync(path)) return [path];
      }
      return [];
    });
}

function diff(previous: SkillSnapshot, next: SkillSnapshot): SkillChanges {
  const before = new Map(previous.skills.map((skill) => [skill.name, skill]));
  const after = new Map(next.skills.map((skill) => [skill.name, skill]));
  const changed = [...after.values()].filter((skill) => {
    const old = before.get(skill.name);
    return old !== undefined && (old.description !== skill.description || old.body !== skill.body || old.status !== skill.status || old.path !== skill.path);
  });
  return {
    added: [...after.keys()].filter((name) => !before.has(name)),
    changed: changed.map((skill) => skill.name),
    removed: [...before.keys()].filter((name) => !after.has(name)),
    invalid: [...next.problems],
  };
}
