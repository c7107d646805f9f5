/**
 * Each agent's skills load (base skills, then its own), as `laoding skills validate`
 * reads them: a SKILL.md that fails is named with its problem, one line per file.
 */
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { SkillCatalog } from "../knowledge/skill-catalog.js";
import type { Logger } from "../log/logger.js";
import { failed, passed, type CheckResult } from "./check-result.js";

export function checkSkills(layout: RuntimeLayout, agents: AgentDefinition[], quietLogger: Logger): CheckResult[] {
  const seen = new Set<string>();
  return agents.flatMap((agent) => {
    const { snapshot } = new SkillCatalog(
      [
        { dir: layout.baseSkillsDir, source: "base" },
        { dir: layout.agentTrees(agent.id).skillsDir, source: "agent" },
      ],
      quietLogger,
    );
    // Base skills are every agent's: a broken one is said once, not once per agent.
    const problems = snapshot.problems.filter((problem) => !seen.has(problem.path));
    for (const problem of problems) seen.add(problem.path);
    const id = `skills:${agent.id}`;
    const title = `skills of agent ${agent.id}`;
    if (problems.length === 0) return [passed(id, `${title} (${snapshot.skills.length} loaded)`)];
    return problems.map((problem) =>
      failed(
        id,
        title,
        `${problem.path} does not load: ${problem.reason}`,
        `Fix ${problem.path} (frontmatter with name and description, the name matching its folder), then check with \`laoding skills validate\`; until then it is skipped`,
      ),
    );
  });
}
