/**
 * An agent's skill catalog: base skills first, then the agent's own folder, where a
 * name clash is resolved in favour of the agent's own (and logged). The catalog is an
 * immutable, versioned snapshot; `reload()` builds a new one and swaps it atomically,
 * so a turn in flight keeps the snapshot it started with. A reload that finds broken
 * skills still succeeds with the good ones and reports the rest.
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import { readSkillFile, type Skill, type SkillProblem } from "./skill.js";

export type SkillSnapshot = {
  readonly version: number;
  readonly skills: readonly Skill[];
  readonly problems: readonly SkillProblem[];
  /** Skills of the agent that shadow a base skill of the same name. */
  readonly shadowed: readonly string[];
  /** Go-era skills: loaded under their normalised name, or skipped for a clash (`skippedFor` names the other). */
  readonly goEra: readonly GoEraNote[];
  get(name: string): Skill | undefined;
};

export type SkillChanges = {
  added: string[];
  changed: string[];
  removed: string[];
  invalid: SkillProblem[];
  /** Set when the reload failed as a whole: the previous snapshot stays in use. */
  error?: string;
};

export type SkillSource = { dir: string; source: Skill["source"] };
export type GoEraNote = {
  path: string;
  folder: string;
  name: string;
  skippedFor?: string;
  /** A skill.md without frontmatter: where its description came from (触发背景, paragraph, heading, folder). */
  descriptionFrom?: Skill["derivedFrom"];
};

export class SkillCatalog {
  private current: SkillSnapshot;
  /** Go-era notes already logged: each is warned about once, not at every reload. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly sources: SkillSource[],
    private readonly logger: Logger,
  ) {
    this.current = buildSnapshot(sources, 1, logger, this.warned);
  }

  get snapshot(): SkillSnapshot {
    return this.current;
  }

  /**
   * Builds a new snapshot from disk and swaps it in; returns what changed. A skill that
   * was valid and is now broken keeps its previous version (reported as invalid); a
   * reload that fails as a whole keeps the previous snapshot and says why.
   */
  reload(): SkillChanges {
    const previous = this.current;
    let next: SkillSnapshot;
    try {
      next = buildSnapshot(this.sources, previous.version + 1, this.logger, this.warned, previous);
    } catch (error) {
      const reason = (error as Error).message;
      this.logger.error({ err: error }, "skill reload failed; keeping the previous skills");
      return { added: [], changed: [], removed: [], invalid: [...previous.problems], error: reason };
    }
    this.current = next;
    return diff(previous, next);
  }
}

function buildSnapshot(
  sources: SkillSource[],
  version: number,
  logger: Logger,
  warned: Set<string>,
  previous?: SkillSnapshot,
): SkillSnapshot {
  const previousByPath = new Map((previous?.skills ?? []).map((skill) => [skill.path, skill]));
  const byName = new Map<string, Skill>();
  const problems: SkillProblem[] = [];
  const shadowed: string[] = [];
  const goEra: GoEraNote[] = [];
  const note = (entry: GoEraNote, message: string) => {
    goEra.push(entry);
    const key = `${entry.path}\0${entry.skippedFor ?? ""}`;
    if (warned.has(key)) return;
    warned.add(key);
    logger.warn(entry, message);
  };
  for (const { dir, source } of sources) {
    for (const path of skillFiles(dir)) {
      const result = readSkillFile(path, source, dir);
      const kept = result.ok ? undefined : previousByPath.get(path);
      if (!result.ok) {
        problems.push({ path, reason: kept ? `${result.error} (the previous version stays in use)` : result.error });
        logger.warn({ path, reason: result.error, keptPrevious: kept !== undefined }, "invalid skill");
        if (!kept) continue;
      }
      const skill = result.ok ? result.value : (kept as Skill);
      const existing = byName.get(skill.name);
      // A Go-era name that clashes with another skill after normalisation is skipped, naming both (DECISIONS.md).
      if (existing && (skill.goEraFolder || existing.goEraFolder)) {
        const [skipped, other] = skill.goEraFolder ? [skill, existing] : [existing, skill];
        note(
          { path: skipped.path, folder: skipped.goEraFolder as string, name: skipped.name, skippedFor: other.path },
          "Go-era skill skipped: its normalised name clashes with another skill",
        );
        byName.set(skill.name, other);
        continue;
      }
      if (existing) {
        shadowed.push(skill.name);
        logger.info(
          { name: skill.name, kept: path, shadowed: existing.path },
          "agent skill overrides a base skill of the same name",
        );
      }
      byName.set(skill.name, skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  for (const skill of skills) {
    if (!skill.goEraFolder) continue;
    if (skill.derivedFrom) {
      note(
        { path: skill.path, folder: skill.goEraFolder, name: skill.name, descriptionFrom: skill.derivedFrom },
        "Go-era skill without frontmatter loaded in place: name from its folder, description from its body (laoding import go adds the frontmatter)",
      );
    } else
      note(
        { path: skill.path, folder: skill.goEraFolder, name: skill.name },
        "Go-era skill loaded under its Agent Skills name; its folder is left as it is",
      );
  }
  return Object.freeze({
    version,
    skills: Object.freeze(skills),
    problems: Object.freeze(problems),
    shadowed: Object.freeze(shadowed),
    goEra: Object.freeze(goEra),
    get: (name: string) => byName.get(name),
  });
}

/** SKILL.md (or a legacy lowercase skill.md) in each immediate subfolder. */
function skillFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  // An unreadable folder fails the reload as a whole (the previous snapshot stays).
  const entries = readdirSync(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      for (const file of ["SKILL.md", "skill.md"]) {
        const path = join(dir, entry.name, file);
        // lstat, not stat: a link named SKILL.md is reported (and refused) rather than followed.
        if (lexists(path)) return [path];
      }
      return [];
    });
}

function diff(previous: SkillSnapshot, next: SkillSnapshot): SkillChanges {
  const before = new Map(previous.skills.map((skill) => [skill.name, skill]));
  const after = new Map(next.skills.map((skill) => [skill.name, skill]));
  const changed = [...after.values()].filter((skill) => {
    const old = before.get(skill.name);
    return (
      old !== undefined &&
      (old.description !== skill.description ||
        old.body !== skill.body ||
        old.status !== skill.status ||
        old.path !== skill.path)
    );
  });
  return {
    added: [...after.keys()].filter((name) => !before.has(name)),
    changed: changed.map((skill) => skill.name),
    removed: [...before.keys()].filter((name) => !after.has(name)),
    invalid: [...next.problems],
  };
}

function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
