/**
 * Operator chat commands for Level 2, answered by the running bot (which owns the
 * agents' toolhosts, so it can write skill files with each agent's authority):
 * `/distill_skill <tag>` distils a tag's lessons now; `/skill_versions <name>` lists a
 * distilled skill's versions and `/skill_versions <name> activate <N>` makes one live
 * (this is how a rollback, or a rejection, is undone). Replies are in BOT_LOCALE.
 */
import type { SkillVersionStatus } from "../../store/skill-versions-store.js";
import type { Store } from "../../store/store.js";
import type { ChatCommand } from "../commands/chat-commands.js";
import { text, type Locale, type TextKey } from "../texts.js";
import type { SkillLoop, SkillOutcome } from "./skill-loop.js";

const STATUS_WORDS: Record<SkillVersionStatus, TextKey> = {
  candidate: "skillStatusCandidate",
  active: "skillStatusActive",
  rejected: "skillStatusRejected",
  rolled_back: "skillStatusRolledBack",
  retired: "skillStatusRetired",
};

export function skillCommands(options: { store: Store; skills: SkillLoop }): ChatCommand[] {
  return [
    {
      name: "distill_skill",
      operatorOnly: true,
      help: "helpDistillSkill",
      async run({ args, message, locale }) {
        const tag = args.trim().toLowerCase();
        if (!tag) return text(locale, "distillUsage");
        // The usual answer, worded here: the loop's own reasons for skipping are English detail.
        const tagged = (await options.store.experiences.list(message.agentId)).some(
          (lesson) => lesson.status !== "deprecated" && lesson.tags.includes(tag),
        );
        if (!tagged) return text(locale, "distillNoLessons", { tag });
        return describeSkillOutcome(await options.skills.distill(message.agentId, tag, { asked: true }), locale);
      },
    },
    {
      name: "skill_versions",
      operatorOnly: true,
      help: "helpSkillVersions",
      async run({ args, message, locale }) {
        const [name, action, version] = args.trim().split(/\s+/);
        if (!name || (action !== undefined && action !== "activate")) return text(locale, "skillVersionsUsage");
        const versions = await options.store.skillVersions.versions(message.agentId, name);
        if (versions.length === 0) return text(locale, "skillNoVersions", { skill: name });
        if (action === "activate") {
          const wanted = versions.find((row) => String(row.version) === version);
          if (!wanted) return text(locale, "skillNoSuchVersion", { skill: name, version: version ?? "?" });
          const live = await options.skills.activate(
            message.agentId,
            name,
            wanted.version,
            `operator ${message.userId}`,
          );
          return text(locale, "skillVersionLive", { skill: name, version: live.version });
        }
        return versions
          .map((row) =>
            text(locale, "skillVersionLine", {
              version: row.version,
              status: text(locale, STATUS_WORDS[row.status]),
              bullets: row.bullets,
              successes: row.trialSuccesses,
              uses: row.trialUses,
            }),
          )
          .join("\n");
      },
    },
  ];
}

export function describeSkillOutcome(outcome: SkillOutcome, locale: Locale): string {
  switch (outcome.action) {
    case "skipped":
      return text(locale, "skillNothingWritten", {
        why: outcome.words ? text(locale, outcome.words.key, outcome.words.values) : outcome.why,
      });
    case "rejected":
      return text(locale, "skillRejected", {
        skill: outcome.skillName,
        version: outcome.version,
        why: outcome.words ? text(locale, outcome.words.key, outcome.words.values) : outcome.why,
      });
    default:
      return text(locale, outcome.action === "drafted" ? "skillDrafted" : "skillPublished", {
        skill: outcome.skillName,
        version: outcome.version,
        author: text(locale, outcome.author === "model" ? "skillAuthorModel" : "skillAuthorTemplate"),
      });
  }
}

/**
 * Runs the operators' queued `laoding experiences distill <tag>` requests (the running
 * bot's timer calls this). The outcome is read back by the CLI, which speaks English.
 */
export async function handleDistillRequests(store: Store, skills: SkillLoop): Promise<number> {
  const pending = await store.skillVersions.pendingRequests();
  for (const request of pending) {
    // Every replica's timer sees the request: the one that claims it handles it.
    if (!(await store.skillVersions.claimRequest(request.id))) continue;
    let outcome: string;
    try {
      outcome = describeSkillOutcome(await skills.distill(request.agentId, request.tag, { asked: true }), "en");
    } catch (error) {
      outcome = `failed: ${(error as Error).message}`;
    }
    await store.skillVersions.handleRequest(request.id, outcome);
  }
  return pending.length;
}
