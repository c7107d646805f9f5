/**
 * Skill drafts from capability gaps: the name (`auto-<intent-key>`, Agent Skills rules),
 * the deterministic template, the structure gate every draft must pass before it is
 * written, and the create-only writer (an existing skill or draft is never overwritten).
 */
import { createHash, randomBytes } from "node:crypto";
import { linkSync, mkdirSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ParseResult } from "./frontmatter.js";
import { parseSkillText, type Skill } from "./skill.js";

export type DraftLocale = "zh" | "en";

export const DRAFT_SECTIONS: Record<DraftLocale, readonly string[]> = {
  en: ["Trigger background", "Procedure", "Tool suggestions", "Test suggestions"],
  zh: ["触发背景", "操作步骤", "工具建议", "测试建议"],
};

/** `auto-<intent-key>`; keys with other than a-z, 0-9 and hyphens get an ASCII form plus a short hash. */
export function draftSkillName(intentKey: string): string {
  const ascii = intentKey
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const exact = ascii === intentKey;
  const hash = createHash("sha256").update(intentKey).digest("hex").slice(0, 8);
  const base = exact ? ascii : [ascii, hash].filter(Boolean).join("-");
  return `auto-${base}`.slice(0, 64).replace(/-+$/, "");
}

export type DraftEvidence = {
  intentKey: string;
  reason: string;
  count: number;
  sessions: number;
  samples: string[];
  errors: string[];
};

export function renderDraftTemplate(
  name: string,
  evidence: DraftEvidence,
  locale: DraftLocale,
  created: string,
): string {
  const [background, procedure, tools, tests] = DRAFT_SECTIONS[locale] as [string, string, string, string];
  const samples = evidence.samples.slice(0, 5).map((sample) => `- ${oneLine(sample, 200)}`);
  const errors = evidence.errors.slice(0, 5).map((error) => `- ${oneLine(error, 200)}`);
  const zh = locale === "zh";
  const description = zh
    ? `草稿：处理“${evidence.intentKey}”类请求（${evidence.count} 次未能完成）。当用户提出此类请求时使用。`
    : `Draft: handle "${evidence.intentKey}" requests, which failed ${evidence.count} times. Use when a user asks for this.`;
  return [
    "---",
    `name: ${name}`,
    `description: ${description}`,
    "status: draft",
    "origin: gap",
    `intent_key: ${evidence.intentKey}`,
    `created: ${created}`,
    "---",
    "",
    `# ${name}`,
    "",
    `## ${background}`,
    zh
      ? `这个请求在 ${evidence.sessions} 个会话中出现了 ${evidence.count} 次，机器人没能完成（原因：${evidence.reason}）。用户的原话：`
      : `This request came up ${evidence.count} times in ${evidence.sessions} sessions and the bot could not complete it (reason: ${evidence.reason}). What users asked:`,
    ...(samples.length > 0 ? samples : ["- (no sample text)"]),
    ...(errors.length > 0 ? ["", zh ? "出现过的错误：" : "Errors seen:", ...errors] : []),
    "",
    `## ${procedure}`,
    zh
      ? "1. 先确认用户要的结果和约束（路径、环境、格式）。\n2. 用工具查清现状（列出文件、读取配置）。\n3. 按小步执行，每步检查结果。\n4. 说明做了什么、结果在哪里、还缺什么。"
      : "1. Confirm the result the user wants and the constraints (paths, environment, format).\n2. Look at the current state with the tools (list files, read configuration).\n3. Work in small steps and check each result.\n4. Say what was done, where the result is, and what is still missing.",
    "",
    `## ${tools}`,
    zh
      ? "- file_list / file_read 了解现状；file_write / file_edit 修改文件。\n- shell_exec 只运行允许的命令；失败时读 REASON 再调整。"
      : "- file_list / file_read to see the current state; file_write / file_edit to change files.\n- shell_exec runs allowed commands only; on failure read the REASON and adjust.",
    "",
    `## ${tests}`,
    zh
      ? "- 用上面的用户原话重新提问，确认机器人能完成。\n- 检查产出的文件或命令输出是否符合预期。"
      : "- Ask again with the user requests above and check the bot completes them.\n- Check the files or command output it produces are what the user expected.",
    "",
  ].join("\n");
}

/**
 * Frontmatter fields and the expected sections, each non-empty. Gap drafts (the default)
 * have the locale's four sections; distilled skills pass their own origin and sections.
 */
export function gateDraft(
  text: string,
  expected: {
    name: string;
    intentKey: string;
    locale: DraftLocale;
    origin?: "gap" | "distilled";
    sections?: readonly string[];
  },
): ParseResult<Skill> {
  const parsed = parseSkillText(text, join("/drafts", expected.name, "SKILL.md"), "agent");
  if (!parsed.ok) return parsed;
  const skill = parsed.value;
  const problems: string[] = [];
  if (skill.status !== "draft") problems.push("status must be draft");
  const origin = expected.origin ?? "gap";
  if (skill.name !== expected.name) problems.push(`name must be ${expected.name}`);
  if (skill.origin !== origin) problems.push(`origin must be ${origin}`);
  if (skill.intentKey !== expected.intentKey) problems.push(`intent_key must be ${expected.intentKey}`);
  if (!skill.created) problems.push("created is missing");
  const sections = splitSections(skill.body);
  for (const title of expected.sections ?? DRAFT_SECTIONS[expected.locale]) {
    const content = sections.get(title);
    if (content === undefined) problems.push(`section "## ${title}" is missing`);
    else if (content.trim().length < 10) problems.push(`section "## ${title}" is empty`);
  }
  return problems.length > 0 ? { ok: false, error: problems.join("; ") } : { ok: true, value: skill };
}

function splitSections(body: string): Map<string, string> {
  const sections = new Map<string, string>();
  let current: string | undefined;
  for (const line of body.split("\n")) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = heading[1] as string;
      sections.set(current, "");
    } else if (current !== undefined) sections.set(current, `${sections.get(current) ?? ""}${line}\n`);
  }
  return sections;
}

/**
 * Creates `<dir>/<name>/SKILL.md` only if the skill folder does not exist yet. The file
 * appears whole (temp file + hard link, which fails if the target exists).
 */
export type DraftWrite = { written: true; path: string } | { written: false; reason: string };

export function writeDraftIfMissing(dir: string, name: string, text: string): DraftWrite {
  const folder = join(dir, name);
  mkdirSync(dir, { recursive: true });
  try {
    mkdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST")
      return { written: false, reason: `${folder} already exists` };
    throw error;
  }
  const path = join(folder, "SKILL.md");
  const temp = join(folder, `.SKILL.md.tmp-${randomBytes(4).toString("hex")}`);
  try {
    writeFileSync(temp, text, { flag: "wx" });
    linkSync(temp, path);
    return { written: true, path };
  } catch (error) {
    rmSync(temp, { force: true });
    try {
      rmdirSync(folder);
    } catch {
      // Not empty: someone else wrote into it; leave it.
    }
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return { written: false, reason: `${path} already exists` };
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
