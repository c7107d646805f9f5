/** Asks the model to write a skill draft from a gap cluster's evidence. */
import type { ParseResult } from "../../knowledge/frontmatter.js";
import { DRAFT_SECTIONS, type DraftEvidence, type DraftLocale } from "../../knowledge/skill-draft.js";
import type { ChatModel } from "../../llm/chat-model.js";

export async function writeDraftWithModel(options: {
  model: ChatModel;
  name: string;
  evidence: DraftEvidence;
  locale: DraftLocale;
  created: string;
  agentId: string;
}): Promise<ParseResult<string>> {
  const { evidence } = options;
  const sections = DRAFT_SECTIONS[options.locale].map((title) => `## ${title}`).join("\n");
  const system = [
    "You write a skill file (SKILL.md) that teaches a chat bot how to handle a kind of request it keeps failing at.",
    "Output only the file, starting with this frontmatter exactly (fill in the description: what the skill does and when to use it, one line, at most 300 characters):",
    "---",
    `name: ${options.name}`,
    "description: ...",
    "status: draft",
    "origin: gap",
    `intent_key: ${evidence.intentKey}`,
    `created: ${options.created}`,
    "---",
    `Then these four sections, each with concrete content${options.locale === "zh" ? " (write in Chinese)" : ""}:`,
    sections,
  ].join("\n");
  const user = [
    `Intent: ${evidence.intentKey}. Failure reason: ${evidence.reason}. ${evidence.count} failures in ${evidence.sessions} sessions.`,
    "What users asked:",
    ...evidence.samples.map((sample) => `- ${sample.slice(0, 300)}`),
    ...(evidence.errors.length > 0
      ? ["Errors seen:", ...evidence.errors.map((error) => `- ${error.slice(0, 300)}`)]
      : []),
  ].join("\n");
  return askForSkillFile(options.model, options.agentId, system, user);
}

/** One model call that returns a whole SKILL.md (code fences stripped); shared by gap drafts and distilled skills. */
export async function askForSkillFile(
  model: ChatModel,
  agentId: string,
  system: string,
  user: string,
): Promise<ParseResult<string>> {
  try {
    const response = await model.complete({
      purpose: "draft",
      agentId,
      maxTokens: 1_500,
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
    });
    const text = (response.content ?? "")
      .trim()
      .replace(/^```(?:markdown|md)?\s*\n/i, "")
      .replace(/\n```\s*$/, "");
    return text ? { ok: true, value: `${text}\n` } : { ok: false, error: "the model returned no file" };
  } catch (error) {
    return { ok: false, error: `the model could not write the file: ${(error as Error).message}` };
  }
}
