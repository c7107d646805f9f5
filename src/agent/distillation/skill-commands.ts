/**
 * Operator chat commands for Level 2, answered by the running bot (which owns the
 * agents' toolhosts, so it can write skill files with each agent's authority):
 * `/distill_skill <tag>` distils a tag's lessons now; `/skill_versions <name>` lists a
 * distilled skill's versions and `/skill_versions <name> activate <N>` makes one live
 * (this is how a rollback, or a rejection, is undone).
 */
import type { Store } from "../../store/store.js";
import type { ChatCommand } from "../commands/chat-commands.js";
import type { SkillLoop, SkillOutcome } from "./skill-loop.js";

export function skillCommands(options: { store: Store; skills: SkillLoop }): ChatCommand[] {
  return [
    {
      name: "distill_skill",
      operatorOnly: true,
      help: { zh: "/distill_skill <标签> 把该标签的经验整理成技能", en: "/distill_skill <tag> distil a tag's lessons into a skill now" },
      async run({ args, message }) {
        const tag = args.trim().toLowerCase();
        if (!tag) return "Usage: /distill_skill <tag> (tags: laoding experiences list)";
        return describeSkillOutcome(await options.skills.distill(message.agentId, tag, { asked: true }));
      },
    },
    {
      name: "skill_versions",
      operatorOnly: true,
      help: { zh: "/skill_versions <技能> [activate <版本>] 查看或切换整理出的技能版本", en: "/skill_versions <skill> [activate <N>] list or switch a distilled skill's versions" },
      async run({ args, message }) {
        const [name, action, version] = args.trim().split(/\s+/);
        if (!name) return "Usage: /skill_versions <distilled-skill> [activate <version>]";
        if (action === "activate") {
          const live = await options.skills.activate(message.agentId, name, Number(version), `operator ${message.userId}`);
          return `${name} v${live.version} is live.`;
        }
        const versions = options.store.skillVersions.versions(message.agentId, name);
        if (versions.length === 0) return `No versions of ${name}.`;
        return versions.map((row) => `v${row.version} ${row.status} · ${row.bullets} bullets · trial ${row.trialSuccesses}/${row.trialUses}`).join("\n");
      },
    },
  ];
}

export function describeSkillOutcome(outcome: SkillOutcome): string {
  return outcome.action === "skipped" ? `Nothing written: ${outcome.why}` : outcome.action === "rejected" ? `${outcome.skillName} v${outcome.version} rejected: ${outcome.why}` : `${outcome.skillName} v${outcome.version} ${outcome.action} (${outcome.author}).`;
}

/** Runs the operators' queued `laoding experiences distill <tag>` requests (the running bot's timer calls this). */
export async function handleDistillRequests(store: Store, skills: SkillLoop): Promise<number> {
  const pending = store.skillVersions.pendingRequests();
  for (const request of pending) {
    let outcome: string;
    try {
      outcome = describeSkillOutcome(await skills.distill(request.agentId, request.tag, { asked: true }));
    } catch (error) {
      outcome = `failed: ${(error as Error).message}`;
    }
    store.skillVersions.handleRequest(request.id, outcome);
  }
  return pending.length;
}
