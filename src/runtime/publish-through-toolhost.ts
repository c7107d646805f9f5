/**
 * Replaces the SKILL.md of an existing distilled skill through the agent's toolhost (the
 * bot never writes into an agent's tree itself). Used by the Level 2 ratchet to publish
 * a new version, a rollback, or an operator's choice of version.
 */
import { join } from "node:path";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";

export async function publishSkillThroughToolhost(
  client: ToolhostClient,
  skillsDir: string,
  name: string,
  text: string,
): Promise<void> {
  const path = join(skillsDir, name, "SKILL.md");
  const written = await client.callTool({ name: "file.write", args: { path, content: text } });
  if (!written.ok) throw new Error(`cannot publish the skill ${path}: ${written.error.code}: ${written.error.reason}`);
}
