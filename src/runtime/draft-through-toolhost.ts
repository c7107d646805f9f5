/**
 * Writes a skill draft into an agent's own skills folder through that agent's toolhost,
 * so the file is made with the agent's authority: the bot never writes into an agent's
 * tree itself, where the agent's shell could swap a folder for a link mid-write. The
 * "only if missing" check races only the agent itself, which may write there anyway.
 */
import { join } from "node:path";
import type { DraftWrite } from "../knowledge/skill-draft.js";
import type { ToolhostClient } from "../toolhost/client/toolhost-client.js";

export async function writeDraftThroughToolhost(
  client: ToolhostClient,
  skillsDir: string,
  name: string,
  text: string,
): Promise<DraftWrite> {
  const folder = join(skillsDir, name);
  const existing = await client.callTool({ name: "file.list", args: { path: folder } });
  if (existing.ok || existing.error.code !== "PATH_NOT_FOUND")
    return { written: false, reason: `${folder} already exists` };
  const path = join(folder, "SKILL.md");
  const written = await client.callTool({ name: "file.write", args: { path, content: text } });
  if (!written.ok) throw new Error(`cannot write the draft ${path}: ${written.error.code}: ${written.error.reason}`);
  return { written: true, path };
}
