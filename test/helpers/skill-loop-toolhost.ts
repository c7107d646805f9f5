/** The skill loop writing into an agent's tree through its real toolhost (as the running bot does). */
import { pino } from "pino";
import { createSkillLoop, type SkillLoop } from "../../src/agent/distillation/skill-loop.js";
import { SkillCatalog } from "../../src/knowledge/skill-catalog.js";
import { writeDraftThroughToolhost } from "../../src/runtime/draft-through-toolhost.js";
import { publishSkillThroughToolhost } from "../../src/runtime/publish-through-toolhost.js";
import type { Store } from "../../src/store/store.js";
import { giveToAgent, realClient, type RealWorkspace } from "./real-toolhost.js";

export function skillLoopThroughToolhost(
  workspace: RealWorkspace,
  agentId: string,
  store: Store,
  clock: { now(): number },
): { skills: SkillLoop; catalog: SkillCatalog; skillsDir: string } {
  const skillsDir = workspace.layout.agentTrees(agentId).skillsDir;
  giveToAgent(workspace, agentId, skillsDir);
  const catalog = new SkillCatalog([{ dir: skillsDir, source: "agent" }], pino({ level: "silent" }));
  const { client } = realClient(workspace, agentId, { callTimeoutMs: 20_000 });
  const skills = createSkillLoop({
    store,
    model: undefined,
    catalog: () => catalog,
    writeDraft: (_agentId, name, text) => writeDraftThroughToolhost(client, skillsDir, name, text),
    publishSkill: (_agentId, name, text) => publishSkillThroughToolhost(client, skillsDir, name, text),
    locale: "en",
    logger: pino({ level: "silent" }),
    clock,
  });
  return { skills, catalog, skillsDir };
}
