/**
 * A skill: a folder holding SKILL.md in the Agent Skills format (`name` equal to the
 * folder name, `description`) plus our optional lifecycle fields. Parsing returns a
 * Result naming the file and the problem; a bad skill is skipped, never fatal.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { isWithin } from "../toolhost/sandbox/path-sandbox.js";
import { basename, dirname } from "node:path";
import { z } from "zod";
import { parseFrontmatter, textValue, type ParseResult } from "./frontmatter.js";
import {
  deriveGoEraDescription,
  isGoEraSkillName,
  normalizeSkillName,
  type DerivedDescription,
} from "./go-era-skill.js";

export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SKILL_STATUSES = ["draft", "active", "deprecated"] as const;
export const SKILL_ORIGINS = ["seed", "gap", "distilled", "agent"] as const;

const skillFrontmatter = z.object({
  name: z
    .string()
    .max(64, { message: "is longer than 64 characters" })
    .regex(SKILL_NAME_PATTERN, { message: "must be lowercase letters, digits and single hyphens" }),
  description: z.string().min(1, { message: "is empty" }).max(1024, { message: "is longer than 1024 characters" }),
  status: z.enum(SKILL_STATUSES, { message: "must be draft, active or deprecated" }).default("active"),
  origin: z.enum(SKILL_ORIGINS, { message: "must be seed, gap, distilled or agent" }).optional(),
  intent_key: z.string().max(100).optional(),
  created: z.string().max(40).optional(),
  last_verified: z.string().max(40).optional(),
  /** Agent Skills' `allowed-tools`: tool names (space- or comma-separated, `*` wildcards) the skill uses; MCP tools named here are offered first. */
  "allowed-tools": z.string().max(2000).optional(),
});

export type Skill = {
  name: string;
  description: string;
  status: (typeof SKILL_STATUSES)[number];
  origin?: (typeof SKILL_ORIGINS)[number];
  intentKey?: string;
  created?: string;
  lastVerified?: string;
  /** Tools it names in `allowed-tools` (`mcp.github.*`, `shell.exec`). */
  allowedTools?: string[];
  /** The markdown body after the frontmatter. */
  body: string;
  path: string;
  /** Where it came from: "base" or the agent's own folder. */
  source: "base" | "agent";
  /** Set for a Go-era skill (`skill_builder/skill.md`): its folder name, loaded under `name`. */
  goEraFolder?: string;
  /** Set for a Go-era `skill.md` written without frontmatter: where its description came from. */
  derivedFrom?: DerivedDescription["from"];
};

export type SkillProblem = { path: string; reason: string };

export function parseSkillText(text: string, path: string, source: Skill["source"]): ParseResult<Skill> {
  const parsed = parseFrontmatter(text);
  if (!parsed.ok) return parsed;
  const data = Object.fromEntries(Object.entries(parsed.value.data).map(([key, value]) => [key, textValue(value)]));
  const folder = basename(dirname(path));
  // The Go bot wrote skill.md without frontmatter too: such a file loads in place, its name
  // from the folder and its description from its body (the catalog warns). Our own SKILL.md
  // keeps needing frontmatter, so a forgotten one is still reported.
  const derived =
    basename(path) === "skill.md" && !/^\uFEFF?---\r?\n/.test(text)
      ? deriveGoEraDescription(parsed.value.body, folder)
      : undefined;
  if (derived) {
    data.name = normalizeSkillName(folder);
    data.description = derived.description;
  }
  // A Go-era folder (underscores) loads under the Agent Skills form of its name; the folder stays as it is.
  const goEra = isGoEraSkillName(folder);
  if (goEra && (data.name === undefined || data.name === folder || data.name === normalizeSkillName(folder)))
    data.name = normalizeSkillName(folder);
  const result = skillFrontmatter.safeParse(data);
  if (!result.success) {
    return {
      ok: false,
      error: result.error.issues.map((issue) => `${issue.path.join(".") || "frontmatter"} ${issue.message}`).join("; "),
    };
  }
  if (result.data.name !== (goEra || derived ? normalizeSkillName(folder) : folder))
    return { ok: false, error: `name "${result.data.name}" does not match its folder "${folder}"` };
  const skill: Skill = {
    name: result.data.name,
    description: result.data.description,
    status: result.data.status,
    body: parsed.value.body.trim(),
    path,
    source,
  };
  if (goEra || derived) skill.goEraFolder = folder;
  if (derived) skill.derivedFrom = derived.from;
  if (result.data.origin) skill.origin = result.data.origin;
  if (result.data.intent_key) skill.intentKey = result.data.intent_key;
  if (result.data.created) skill.created = result.data.created;
  if (result.data.last_verified) skill.lastVerified = result.data.last_verified;
  const allowedTools = result.data["allowed-tools"]?.split(/[\s,]+/).filter((name) => name.length > 0);
  if (allowedTools && allowedTools.length > 0) skill.allowedTools = allowedTools;
  return { ok: true, value: skill };
}

/** Largest SKILL.md read; a bigger one is refused, not truncated. */
const MAX_SKILL_FILE_BYTES = 1024 * 1024;

/**
 * Reads a skill file that must lie inside `root`. An agent's own skills folder is the
 * agent's to change, and the bot reads it with more authority than the agent: so the file
 * is opened without following a final link, and the opened file's real path is checked
 * through /proc/self/fd (a folder swapped for a link on the way is caught), like the
 * toolhost's reads.
 */
export function readSkillFile(path: string, source: Skill["source"], root: string): ParseResult<Skill> {
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!isWithin(realpathSync(root), readlinkSync(`/proc/self/fd/${fd}`)))
      return { ok: false, error: "the file lies outside its skills folder (through a link)" };
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { ok: false, error: "not a regular file" };
    if (stats.size > MAX_SKILL_FILE_BYTES) return { ok: false, error: `larger than ${MAX_SKILL_FILE_BYTES} bytes` };
    text = readFileSync(fd, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      ok: false,
      error:
        code === "ELOOP"
          ? "the file is a link; skills are read only from real files"
          : `cannot read: ${code ?? (error as Error).message}`,
    };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return parseSkillText(text, path, source);
}
