/**
 * Skills from the Go LaodingBot: `skills/<name>/skill.md` with underscore names
 * (`skill_builder`, `auto_<intent_key>`). The Agent Skills format allows only lowercase
 * letters, digits and single hyphens, so such a skill is loaded under its normalised name
 * (`skill-builder`, `auto-<intent-key>`), with a warning, and its folder is left untouched.
 * `laoding share plan` shows the same mapping, from this one function.
 */
import { SKILL_NAME_PATTERN } from "./skill.js";

/** The Agent Skills form of a Go-era name: lowercase, `_` and other separators to single hyphens. */
export function normalizeSkillName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}

/** A Go-era folder name: lowercase with underscores (`skill_builder`), normalising to a valid name. */
export function isGoEraSkillName(name: string): boolean {
  return name.includes("_") && /^[a-z0-9][a-z0-9_-]*$/.test(name) && SKILL_NAME_PATTERN.test(normalizeSkillName(name));
}

/** A Go-era gap draft (`auto_<intent_key>`), which belongs to one agent's own skills. */
export function isGoEraDraftName(name: string): boolean {
  return isGoEraSkillName(name) && name.startsWith("auto_");
}

/**
 * The SKILL.md text a Go-era file becomes when it is copied into an agent's folder: the
 * frontmatter `name` set to the normalised name (added when missing), the rest unchanged.
 */
export function normalizeGoEraSkillText(text: string, folder: string): string {
  const name = normalizeSkillName(folder);
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) return `---\nname: ${name}\ndescription: ${folder} (from the Go LaodingBot)\n---\n${normalized}`;
  const end = normalized.indexOf("\n---", 4);
  if (end < 0) return normalized;
  const head = normalized.slice(4, end);
  const lines = head.split("\n");
  const index = lines.findIndex((line) => /^name\s*:/.test(line));
  if (index >= 0) lines[index] = `name: ${name}`;
  else lines.unshift(`name: ${name}`);
  return `---\n${lines.join("\n")}${normalized.slice(end)}`;
}
