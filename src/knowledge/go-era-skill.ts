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

/** Where a frontmatter-less Go-era skill's description came from (the catalog's warning says it). */
export type DerivedDescription = { description: string; from: "触发背景" | "paragraph" | "heading" | "folder" };

const DESCRIPTION_MAX_CHARS = 1024;

/**
 * A description for a Go-era skill written without frontmatter: the 触发背景 ("when this
 * applies") section's first paragraph, else the first paragraph of text, else the first
 * heading, else the folder name. Chosen in that order because the trigger section is what
 * routing needs to read; a title alone says least.
 */
export function deriveGoEraDescription(body: string, folder: string): DerivedDescription {
  const lines = body
    .replace(/^\uFEFF/, "")
    .replace(/\r\n/g, "\n")
    .split("\n");
  const paragraphAfter = (start: number): string | undefined => {
    const collected: string[] = [];
    for (let index = start; index < lines.length; index += 1) {
      const line = (lines[index] as string).trim();
      if (/^#{1,6}\s/.test(line)) {
        if (collected.length > 0) break;
        if (start > 0) break;
        continue;
      }
      if (line === "" || /^(```|---)/.test(line)) {
        if (collected.length > 0) break;
        continue;
      }
      collected.push(line.replace(/^[-*+]\s+|^\d+[.)]\s+/, ""));
    }
    return collected.length > 0 ? collected.join(" ") : undefined;
  };
  const cap = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, DESCRIPTION_MAX_CHARS);
  const trigger = lines.findIndex((line) => /^#{1,6}\s*触发背景/.test(line.trim()));
  const fromTrigger = trigger >= 0 ? paragraphAfter(trigger + 1) : undefined;
  if (fromTrigger) return { description: cap(fromTrigger), from: "触发背景" };
  const paragraph = paragraphAfter(0);
  if (paragraph) return { description: cap(paragraph), from: "paragraph" };
  const heading = lines
    .map((line) => /^#{1,6}\s+(.+)$/.exec(line.trim())?.[1])
    .find((text) => text !== undefined && text.trim() !== "");
  if (heading) return { description: cap(heading), from: "heading" };
  return { description: `${folder} (from the Go LaodingBot)`, from: "folder" };
}

/** A frontmatter value on one line, quoted when YAML would read it otherwise. */
export function frontmatterScalar(value: string): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return /^[\w\u4e00-\u9fff][^:#"'\n]*$/.test(flat) && !/\s$/.test(flat)
    ? flat
    : `"${flat.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * The SKILL.md text a Go-era file becomes when it is copied into an agent's folder: the
 * frontmatter `name` set to the normalised name (added when missing), the rest unchanged.
 * A file without frontmatter gets one, its description derived from its body.
 */
export function normalizeGoEraSkillText(text: string, folder: string, extra: Record<string, string> = {}): string {
  const name = normalizeSkillName(folder);
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const extraLines = Object.entries(extra)
    .map(([key, value]) => `${key}: ${frontmatterScalar(value)}\n`)
    .join("");
  if (!normalized.startsWith("---\n"))
    return `---\nname: ${name}\ndescription: ${frontmatterScalar(deriveGoEraDescription(normalized, folder).description)}\n${extraLines}---\n${normalized}`;
  const end = normalized.indexOf("\n---", 4);
  if (end < 0) return normalized;
  const head = normalized.slice(4, end);
  const lines = head.split("\n");
  const index = lines.findIndex((line) => /^name\s*:/.test(line));
  if (index >= 0) lines[index] = `name: ${name}`;
  else lines.unshift(`name: ${name}`);
  for (const [key, value] of Object.entries(extra)) {
    if (!lines.some((line) => new RegExp(`^${key}\\s*:`).test(line))) lines.push(`${key}: ${frontmatterScalar(value)}`);
  }
  return `---\n${lines.join("\n")}${normalized.slice(end)}`;
}
