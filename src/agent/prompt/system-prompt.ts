/**
 * The system prompt is built from named sections; the builder also returns a manifest
 * (section names and sizes) so `/context` can show what the model was sent. Later
 * features add sections (library signpost, experiences) without touching the others.
 */
export type PromptSection = { name: string; content: string };
export type PromptManifest = {
  sections: { name: string; chars: number }[];
  totalChars: number;
  skills: string[];
  /** The agent's MCP servers that were not running when the turn listed its tools, and tools over the cap. */
  tools?: { mcpUnavailable: { server: string; state: string; reason: string }[]; mcpLeftOut: number };
};

export function buildSystemPrompt(
  sections: PromptSection[],
  skills: string[],
): { text: string; manifest: PromptManifest } {
  const present = sections.filter((section) => section.content.trim().length > 0);
  const text = present.map((section) => section.content.trim()).join("\n\n");
  return {
    text,
    manifest: {
      sections: present.map((section) => ({ name: section.name, chars: section.content.trim().length })),
      totalChars: text.length,
      skills,
    },
  };
}

export function toolGuidanceSection(options: { cwd: string; locale: "zh" | "en" }): PromptSection {
  return {
    name: "tool-use",
    content: [
      "## Tools",
      `Your working folder is ${options.cwd}. Relative paths resolve against it.`,
      "Use the tools to look things up and act instead of guessing. Read a file before editing it.",
      "A failed tool call comes back as ERROR_CODE=...; TOOL=...; REASON=... — read the reason and adjust; do not repeat the same failing call.",
      "When you have what the user needs, answer without calling more tools.",
      options.locale === "zh"
        ? "Answer in the user's language (default: Chinese)."
        : "Answer in the user's language (default: English).",
    ].join("\n"),
  };
}

export function skillsSection(skills: { name: string; body: string; status: string }[]): PromptSection {
  if (skills.length === 0) return { name: "skills", content: "" };
  return {
    name: "skills",
    content: [
      "## Skills for this request",
      ...skills.map(
        (skill) =>
          `### ${skill.name}${skill.status === "draft" ? " (draft: verify its steps as you go)" : ""}\n${skill.body}`,
      ),
    ].join("\n\n"),
  };
}
