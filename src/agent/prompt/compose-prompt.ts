/**
 * The system prompt as data: an ordered list of named sections, each with where its text
 * comes from and what bounds its size. A turn builds its prompt by walking the list in
 * order; `/context` lists the last prompt's sections, in that order, from the manifest
 * the walk produced. Empty sections are left out of both. To find where something enters
 * the prompt, read `PROMPT_SECTIONS`.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { personaFile, type AgentDefinition } from "../../config/agents.js";
import type { RuntimeLayout } from "../../config/runtime-layout.js";
import type { SkillSnapshot } from "../../knowledge/skill-catalog.js";
import { SUMMARY_MAX_CHARS } from "../conversation/history.js";
import { LESSONS_SECTION } from "../distillation/lessons-section.js";
import { unsafeText } from "../distillation/unsafe-text.js";
import { MAX_ACTIVE_INJECTED, MAX_DRAFT_INJECTED } from "../distillation/select-lessons.js";
import { MAX_ROUTED_SKILLS, type RouteDecision } from "../routing/route-message.js";
import type { Locale } from "../texts.js";
import { LIBRARY_SIGNPOST_SECTION } from "./library-signpost.js";
import { agentAreaSection, MAX_MOVE_LINES } from "./share-area-section.js";
import {
  buildSystemPrompt,
  skillsSection,
  toolGuidanceSection,
  type PromptManifest,
  type PromptSection,
} from "./system-prompt.js";

/** Where the prompt's parts come from beyond the turn itself (the orchestrator's options). */
export type PromptSources = {
  layout: RuntimeLayout;
  locale: Locale;
  logger: Logger;
  rules?: (agentId: string) => string[] | Promise<string[]>;
  librarySignpost?: (agentId: string) => PromptSection | undefined | Promise<PromptSection | undefined>;
  extraSections?: (context: { agentId: string; userText: string }) => PromptSection[] | Promise<PromptSection[]>;
  now?: () => number;
};

/** What one turn contributes: its agent and message, its route, the summary, the chat folder, the chosen lessons. */
export type PromptTurn = {
  agent: AgentDefinition;
  userText: string;
  route: RouteDecision;
  snapshot: SkillSnapshot;
  summary: string | null;
  cwd: string;
  lessons: PromptSection | undefined;
};

export type PromptSectionSpec = {
  /** The section's name in the manifest; sections named by their producer say so here. */
  name: string;
  /** Where its text comes from. */
  source: string;
  /** What bounds its size. */
  budget: string;
  build(sources: PromptSources, turn: PromptTurn): PromptSection[] | Promise<PromptSection[]>;
};

/** The system prompt's sections, in the order the model reads them. */
export const PROMPT_SECTIONS: readonly PromptSectionSpec[] = [
  {
    name: "persona",
    source: "bot_context/<persona> (default soul.md), read every turn; a plain one when missing",
    budget: "the whole file",
    build: (sources, turn) => [{ name: "persona", content: readPersona(sources, turn.agent) }],
  },
  {
    name: "rules",
    source: "operator-accepted rules (laoding rules accept), read every turn",
    budget: "every active rule; unsafe ones dropped",
    build: async (sources, turn) => [
      { name: "rules", content: rulesSection((await sources.rules?.(turn.agent.id)) ?? []) },
    ],
  },
  {
    name: "skills",
    source: "the routed skills' SKILL.md bodies, from the turn's catalog snapshot",
    budget: `at most ${MAX_ROUTED_SKILLS} skills`,
    build: (_sources, turn) => [skillsSection(turn.route.skills.flatMap((name) => turn.snapshot.get(name) ?? []))],
  },
  {
    name: LIBRARY_SIGNPOST_SECTION,
    source: "the experience library's signpost, when the library is enabled for the agent",
    budget: "fixed text",
    build: async (sources, turn) => {
      const signpost = await sources.librarySignpost?.(turn.agent.id);
      return signpost ? [signpost] : [];
    },
  },
  {
    name: LESSONS_SECTION,
    source: "the distillation loop's lessons for this task (none when held out)",
    budget: `at most ${MAX_ACTIVE_INJECTED} active and ${MAX_DRAFT_INJECTED} draft lessons`,
    build: (_sources, turn) => (turn.lessons ? [turn.lessons] : []),
  },
  {
    name: "extra",
    source: "more sections named by their producers (distilled experiences)",
    budget: "set by each producer",
    build: async (sources, turn) =>
      (await sources.extraSections?.({ agentId: turn.agent.id, userText: turn.userText })) ?? [],
  },
  {
    name: "tool-use",
    source: "fixed guidance with the chat's working folder",
    budget: "fixed text",
    build: (sources, turn) => [toolGuidanceSection({ cwd: turn.cwd, locale: sources.locale })],
  },
  {
    name: "private-folder",
    source: "the agent's private folder and its recent share moves (data folder)",
    budget: `at most ${MAX_MOVE_LINES} moves`,
    build: (sources, turn) => [
      agentAreaSection({ layout: sources.layout, agentId: turn.agent.id, nowMs: (sources.now ?? Date.now)() }),
    ],
  },
  {
    name: "conversation-summary",
    source: "the session's rolling summary of messages older than the history budget",
    budget: `about ${SUMMARY_MAX_CHARS} characters`,
    build: (_sources, turn) => [
      { name: "conversation-summary", content: turn.summary ? `## Earlier in this conversation\n${turn.summary}` : "" },
    ],
  },
];

/** The system prompt from `PROMPT_SECTIONS`, and its manifest (what `/context` shows). */
export async function composePrompt(
  sources: PromptSources,
  turn: PromptTurn,
): Promise<{ text: string; manifest: PromptManifest }> {
  const sections: PromptSection[] = [];
  for (const spec of PROMPT_SECTIONS) sections.push(...(await spec.build(sources, turn)));
  return buildSystemPrompt(sections, turn.route.skills);
}

/** `/context`'s lines: each section of the last prompt with its size, in the list's order. */
export function manifestLines(manifest: PromptManifest): string[] {
  const specs = new Map(PROMPT_SECTIONS.map((spec) => [spec.name, spec]));
  const extra = specs.get("extra");
  return manifest.sections.map((section) => {
    // A section a producer added under its own name is one of the "extra" ones.
    const spec = specs.get(section.name) ?? extra;
    return `- ${section.name}: ${section.chars}${spec ? ` (${spec.source}; ${spec.budget})` : ""}`;
  });
}

function readPersona(sources: PromptSources, agent: AgentDefinition): string {
  const plain = `You are ${agent.name}, a helpful team assistant.${agent.description ? ` ${agent.description}` : ""}`;
  try {
    // Checked again per turn: bot_context/ may have changed since start-up.
    const file = personaFile(sources.layout.botContextDir, agent);
    if (file) return readFileSync(file, "utf8");
    sources.logger.warn(
      { persona: agent.persona ?? "soul.md", agentId: agent.id },
      "persona file missing; using a plain one",
    );
  } catch (error) {
    sources.logger.error(
      { agentId: agent.id, reason: (error as Error).message },
      "persona file refused; using a plain one",
    );
  }
  return plain;
}

/** Rules stored before the text checks existed are checked again here: hidden text or a download piped into a shell never reaches a prompt. */
function rulesSection(stored: string[]): string {
  const rules = stored.filter((rule) => {
    const unsafe = unsafeText(rule);
    return unsafe === undefined || unsafe.hold === true;
  });
  return rules.length === 0 ? "" : ["## Rules", ...rules.map((rule) => `- ${rule}`)].join("\n");
}
