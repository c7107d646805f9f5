/**
 * Rule candidates for the admin tests, as the learning loops leave them: an active
 * distilled skill version whose decision heuristics are candidates (one of them carries a
 * URL, which is never offered), beside the lessons `seedLessons` makes.
 */
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import type { RealWorkspace } from "./real-toolhost.js";

export const SKILL_HEURISTICS = [
  "Dry-run the migration before you apply it.",
  "Read the gateway's health page before a deploy.",
  "Tag the release before you build it.",
  "Keep one deploy running at a time.",
  "Roll back first, then look for the cause.",
];

/** An active version 1 of skill `deploy-gateway` for `agentId`; its candidates are `deploy-gateway@v1#1`…`#5`. */
export async function seedSkillHeuristics(workspace: RealWorkspace, agentId: string): Promise<void> {
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    const content = [
      "---",
      "name: deploy-gateway",
      "description: deploy the gateway",
      "---",
      "## Decision heuristics",
      ...SKILL_HEURISTICS.map((text, index) => `- ${text} [exp-00000${index + 1}]`),
      "- See https://wiki.example/deploy for the rest.",
      "",
    ].join("\n");
    const version = await store.skillVersions.add({
      agentId,
      skillName: "deploy-gateway",
      tag: "deploy",
      content,
      bullets: SKILL_HEURISTICS.length + 1,
      actor: "distiller",
    });
    await store.skillVersions.setStatus(version.id, "active", { action: "promote", reason: "trial", actor: "test" });
  } finally {
    await store.close();
  }
}
