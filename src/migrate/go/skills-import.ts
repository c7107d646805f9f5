/**
 * The Go bot's skills (`skills/<folder>/skill.md`, with or without frontmatter): shared
 * skills become base skills in the workspace's `skills/<name>/SKILL.md`, gap drafts
 * (`auto_<intent_key>`) go to one agent's drafts folder as `auto-<intent-key>/SKILL.md`.
 * Each gets frontmatter (name from the folder; description kept, or derived from the body
 * with a warning). A name that collides after normalisation with a skill already there, or
 * with another Go folder, is skipped naming both (DECISIONS.md); an identical file is
 * left as it is, so a second import copies nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { normalizeIntentKey } from "../../agent/gaps/intent-key.js";
import { parseFrontmatter } from "../../knowledge/frontmatter.js";
import {
  deriveGoEraDescription,
  isGoEraDraftName,
  normalizeGoEraSkillText,
  normalizeSkillName,
} from "../../knowledge/go-era-skill.js";
import { SKILL_NAME_PATTERN } from "../../knowledge/skill.js";
import type { MaintenancePool } from "../../runtime/library-maintenance.js";
import { readGoFile, sha256, walkGoFolder } from "./go-files.js";

export type SkillImport = {
  folder: string;
  source: string;
  kind: "skill" | "draft";
  /** The Agent Skills name it loads under. */
  becomes: string;
  dest: string;
  agentId?: string;
  intentKey?: string;
  state: "copy" | "same" | "skipped";
  reason?: string;
  /** Set when the Go file had no frontmatter: where the description came from. */
  derivedFrom?: string;
  content?: Buffer;
  sha256?: string;
};

export type SkillsContext = { baseSkillsDir: string; agentId: string; draftsDir: string; maintenance: MaintenancePool };

export async function planSkills(goSkillsDir: string, context: SkillsContext): Promise<SkillImport[]> {
  const plans: SkillImport[] = [];
  const taken = new Map<string, string>();
  const folders = new Map<string, { file?: string; refused?: string }>();
  for (const entry of walkGoFolder(goSkillsDir, 1)) {
    const [folder, file] = entry.relativePath.split("/");
    if (!folder || folder.startsWith(".")) continue;
    if (file === undefined) {
      if ("refused" in entry) folders.set(folder, { refused: entry.refused });
      continue;
    }
    if (file !== "skill.md" && file !== "SKILL.md") continue;
    if ("refused" in entry) folders.set(folder, { refused: `${file} is ${entry.refused}` });
    else if (!folders.get(folder)?.file) folders.set(folder, { file: entry.path });
  }
  for (const [folder, found] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    const source = found.file ?? join(goSkillsDir, folder);
    const becomes = normalizeSkillName(folder);
    const draft = isGoEraDraftName(folder);
    const base: SkillImport = { folder, source, kind: draft ? "draft" : "skill", becomes, dest: "", state: "skipped" };
    if (draft) {
      base.agentId = context.agentId;
      base.intentKey = normalizeIntentKey(folder.slice("auto_".length), "");
    }
    base.dest = join(draft ? context.draftsDir : context.baseSkillsDir, becomes, "SKILL.md");
    if (!found.file) {
      plans.push({ ...base, reason: found.refused ?? "no skill.md in the folder" });
      continue;
    }
    if (!SKILL_NAME_PATTERN.test(becomes)) {
      plans.push({ ...base, reason: `"${folder}" gives no valid skill name` });
      continue;
    }
    const other = taken.get(becomes);
    if (other) {
      plans.push({
        ...base,
        reason: `its name ${becomes} is also what ${other} becomes; skipped (rename one folder and import again)`,
      });
      continue;
    }
    taken.set(becomes, source);
    const text = readGoFile(found.file).toString("utf8");
    const parsed = parseFrontmatter(text);
    if (!parsed.ok) {
      plans.push({ ...base, reason: parsed.error });
      continue;
    }
    const hasFrontmatter = /^\uFEFF?---\r?\n/.test(text);
    const extra: Record<string, string> = draft
      ? { status: "draft", origin: "gap", intent_key: base.intentKey as string }
      : {};
    const content = Buffer.from(normalizeGoEraSkillText(text, folder, extra), "utf8");
    const plan: SkillImport = { ...base, content, sha256: sha256(content), state: "copy" };
    if (!hasFrontmatter) plan.derivedFrom = deriveGoEraDescription(parsed.value.body, folder).from;
    plans.push(plan);
  }
  await settleDestinations(plans, context);
  return plans;
}

/** Marks each copy "same" (identical file there) or "skipped" (another skill holds the name). */
async function settleDestinations(plans: SkillImport[], context: SkillsContext): Promise<void> {
  for (const plan of plans.filter((candidate) => candidate.state === "copy" && candidate.kind === "skill")) {
    const folder = join(context.baseSkillsDir, plan.becomes);
    const existing = ["SKILL.md", "skill.md"].map((name) => join(folder, name)).find((path) => existsSync(path));
    if (!existing) continue;
    if (sha256(readFileSync(existing)) === plan.sha256) plan.state = "same";
    else
      Object.assign(plan, {
        state: "skipped",
        reason: `${plan.folder} becomes ${plan.becomes}, which ${existing} already is; skipped (DECISIONS.md: the skill already there wins)`,
      });
  }
  const drafts = plans.filter((candidate) => candidate.state === "copy" && candidate.kind === "draft");
  if (drafts.length === 0) return;
  // The drafts folder is the agent's: looked at through its toolhost, never as root.
  const files = context.maintenance.agent(context.agentId).files;
  const stats = await files.stat(
    drafts.map((plan) => plan.dest),
    true,
  );
  for (const [index, plan] of drafts.entries()) {
    const stat = stats[index];
    if (!stat || "error" in stat || stat.type === "missing") continue;
    if (stat.type === "file" && stat.sha256 === plan.sha256) plan.state = "same";
    else
      Object.assign(plan, {
        state: "skipped",
        reason: `${plan.folder} becomes ${plan.becomes}, which ${plan.dest} already is (a different ${stat.type}); skipped`,
      });
  }
}
