/**
 * Writes a distilled skill (Level 2) from one tag's lessons: by the model, or by a
 * deterministic template when the model is missing or its text fails the gate. The gate
 * is the gap drafts' structure gate (frontmatter, sections) plus one rule of its own:
 * every bullet cites at least one of the given lessons, and no other.
 */
import { draftSkillName, gateDraft } from "../../knowledge/skill-draft.js";
import type { ChatModel } from "../../llm/chat-model.js";
import { askForSkillFile } from "../gaps/draft-writer.js";
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Locale } from "../texts.js";
import { DISTILLED_SECTIONS, allBullets, bulletLessonIds } from "./skill-sections.js";
import { unsafeText } from "./unsafe-text.js";

export function distilledSkillName(tag: string): string {
  return draftSkillName(tag).replace(/^auto-/, "distilled-");
}

export type SkillText = { ok: true; text: string } | { ok: false; error: string };

export function gateDistilledSkill(
  text: string,
  expected: { name: string; tag: string; locale: Locale; lessonIds: ReadonlySet<number> },
): SkillText {
  const sections = Object.values(DISTILLED_SECTIONS[expected.locale]);
  const gate = gateDraft(text, {
    name: expected.name,
    intentKey: expected.tag,
    locale: expected.locale,
    origin: "distilled",
    sections,
  });
  if (!gate.ok) return gate;
  for (const bullet of allBullets(text)) {
    const ids = bulletLessonIds(bullet);
    if (ids.length === 0) return { ok: false, error: `bullet "${bullet.slice(0, 60)}" cites no lesson` };
    const unknown = ids.find((id) => !expected.lessonIds.has(id));
    if (unknown !== undefined)
      return {
        ok: false,
        error: `bullet cites ${formatExperienceId(unknown)}, which is not one of its source lessons`,
      };
    // A skill is in prompts like a lesson; a command its lessons were approved for may stay.
    const unsafe = unsafeText(bullet);
    if (unsafe && !unsafe.hold) return { ok: false, error: `bullet "${bullet.slice(0, 60)}" ${unsafe.reason}` };
  }
  return { ok: true, text };
}

function frontmatter(
  name: string,
  tag: string,
  locale: Locale,
  created: string,
  lessons: readonly Experience[],
): string[] {
  const description =
    locale === "zh"
      ? `从 ${lessons.length} 条关于“${tag}”的经验中整理出的做法与教训。处理“${tag}”相关请求时使用。`
      : `Heuristics distilled from ${lessons.length} lessons about "${tag}". Use for "${tag}" requests.`;
  return [
    "---",
    `name: ${name}`,
    `description: ${description}`,
    "status: draft",
    "origin: distilled",
    `intent_key: ${tag}`,
    `created: ${created}`,
    "---",
    "",
  ];
}

export function renderDistilledTemplate(
  name: string,
  tag: string,
  lessons: readonly Experience[],
  locale: Locale,
  created: string,
): string {
  const titles = DISTILLED_SECTIONS[locale];
  const bullet = (lesson: Experience) => `- ${lesson.summary} [${formatExperienceId(lesson.id)}]`;
  const positive = lessons.filter((lesson) => lesson.category !== "anti_pattern");
  const negative = lessons.filter((lesson) => lesson.category === "anti_pattern" || lesson.category === "pitfall");
  const all = lessons.map((lesson) => formatExperienceId(lesson.id)).join(", ");
  const limit =
    locale === "zh"
      ? `- 以上只来自 ${lessons.length} 条经验，环境变化时先核实再照做 [${all}]`
      : `- These come from ${lessons.length} lessons only; verify them when the environment has changed [${all}]`;
  return [
    ...frontmatter(name, tag, locale, created, lessons),
    `# ${name}`,
    "",
    `## ${titles.heuristics}`,
    ...(positive.length > 0 ? positive : lessons).map(bullet),
    "",
    `## ${titles.antiPatterns}`,
    ...(negative.length > 0 ? negative : lessons.slice(0, 1)).map(bullet),
    "",
    `## ${titles.limits}`,
    limit,
    "",
  ].join("\n");
}

export async function writeSkillWithModel(options: {
  model: ChatModel;
  name: string;
  tag: string;
  lessons: readonly Experience[];
  previous?: string;
  locale: Locale;
  created: string;
  agentId: string;
}): Promise<SkillText> {
  const titles = Object.values(DISTILLED_SECTIONS[options.locale]);
  const system = [
    "You turn a team's lessons about one topic into a skill file (SKILL.md). Output only the file, starting with this frontmatter (fill in the description, one line):",
    ...frontmatter(options.name, options.tag, options.locale, options.created, options.lessons).slice(0, -1),
    `Then these sections, each a list of "- " bullets${options.locale === "zh" ? " (in Chinese)" : ""}; end every bullet with the lessons it rests on, like [exp-000012]; cite only the lessons given:`,
    ...titles.map((title) => `## ${title}`),
    ...(options.previous
      ? ["Keep what the previous version says unless a lesson contradicts it. Previous version:", options.previous]
      : []),
  ].join("\n");
  const user = options.lessons
    .map((lesson) => `[${formatExperienceId(lesson.id)}] (${lesson.category}, ${lesson.status}) ${lesson.summary}`)
    .join("\n");
  const written = await askForSkillFile(options.model, options.agentId, system, user);
  return written.ok ? { ok: true, text: written.value } : written;
}
