/**
 * The lifecycle of a distilled skill, as the seed's skills have it: its SKILL.md's
 * `status:` is `draft` when a version goes live, `active` once it was used in ≥ 2 tasks
 * with a success rate over 50%, and `deprecated` (no longer routed) after 30 days unused
 * or with a success rate under 20% over ≥ 5 uses. Counted on the live version from the
 * tasks that have an outcome (an environment failure is no evidence). While a version is
 * on trial with an earlier version to roll back to, the trial decides first. A change is
 * stored and ledgered in one step, then the SKILL.md is published through the agent's
 * toolhost and the catalog reloaded.
 */
import { parseFrontmatter } from "../../knowledge/frontmatter.js";
import { SKILL_STATUSES } from "../../knowledge/skill.js";
import type { SkillVersion } from "../../store/skill-versions-store.js";
import { RATCHET } from "./skill-ratchet.js";
import type { SkillLoopOptions } from "./skill-loop.js";

export const SKILL_LIFECYCLE = {
  promoteUses: 2,
  promoteRate: 0.5,
  deprecateRate: 0.2,
  deprecateMinUses: 5,
  unusedDays: 30,
} as const;

const DAY_MS = 86_400_000;

export type SkillState = (typeof SKILL_STATUSES)[number];

export type SkillTransition = { to: SkillState; action: "promote" | "deprecate"; reason: string };

export type SkillLifecycleChange = {
  skillName: string;
  version: number;
  from: SkillState;
  to: SkillState;
  reason: string;
};

/** The `status:` of a SKILL.md's frontmatter, as the catalog reads it (missing: active). */
export function skillState(content: string): SkillState {
  const parsed = parseFrontmatter(content);
  const status = parsed.ok ? parsed.value.data.status : undefined;
  return SKILL_STATUSES.find((state) => state === status) ?? "active";
}

/** The same text with its frontmatter's `status:` set (added at the end of the frontmatter if missing). */
export function withSkillState(content: string, state: SkillState): string {
  if (!content.startsWith("---\n")) return content;
  const end = content.indexOf("\n---", 4);
  if (end < 0) return content;
  const front = content.slice(4, end);
  const next = /^status:.*$/m.test(front)
    ? front.replace(/^status:.*$/m, `status: ${state}`)
    : `${front}\nstatus: ${state}`;
  return `---\n${next}${content.slice(end)}`;
}

/** The rules, as a pure function of the live version's counters, its state and the clock. */
export function nextSkillState(
  version: Pick<SkillVersion, "uses" | "successes" | "lastUsedAt" | "updatedAt" | "trialUses">,
  state: SkillState,
  now: number,
  trialCanRollBack: boolean,
): SkillTransition | undefined {
  if (state === "deprecated") return undefined;
  const idleDays = Math.floor((now - (version.lastUsedAt ?? version.updatedAt)) / DAY_MS);
  if (idleDays >= SKILL_LIFECYCLE.unusedDays)
    return { to: "deprecated", action: "deprecate", reason: `unused for ${idleDays} days` };
  const rate = version.uses === 0 ? 0 : version.successes / version.uses;
  const percent = Math.round(rate * 100);
  const trialFirst = trialCanRollBack && version.trialUses < RATCHET.trialUses;
  if (version.uses >= SKILL_LIFECYCLE.deprecateMinUses && rate < SKILL_LIFECYCLE.deprecateRate && !trialFirst)
    return { to: "deprecated", action: "deprecate", reason: `success ${percent}% over ${version.uses} uses` };
  if (state === "draft" && version.uses >= SKILL_LIFECYCLE.promoteUses && rate > SKILL_LIFECYCLE.promoteRate)
    return { to: "active", action: "promote", reason: `used in ${version.uses} tasks, success ${percent}%` };
  return undefined;
}

/** Judges a skill's live version now; a change is ledgered, published and the catalog reloaded. */
export async function judgeSkill(
  options: SkillLoopOptions,
  agentId: string,
  name: string,
  now: number,
): Promise<SkillLifecycleChange | undefined> {
  const { store } = options;
  const change = await store.transaction(
    async () => {
      const versions = await store.skillVersions.versions(agentId, name);
      const live = versions.find((row) => row.status === "active");
      if (!live) return undefined;
      const from = skillState(live.content);
      const canRollBack =
        live.baselineRate !== null && versions.some((row) => row.version < live.version && row.status === "retired");
      const transition = nextSkillState(live, from, now, canRollBack);
      if (!transition) return undefined;
      const updated = await store.skillVersions.setLifecycle(live.id, withSkillState(live.content, transition.to), {
        action: transition.action,
        reason: transition.reason,
        actor: "skill-lifecycle",
        from,
        to: transition.to,
      });
      return { updated, from, transition };
    },
    { lock: `skill:${agentId}:${name}` },
  );
  if (!change) return undefined;
  const { updated, from, transition } = change;
  // Stored first, published after the commit (as a rollback is): two tasks settling at once change it once.
  await options.publishSkill(agentId, name, updated.content);
  options.catalog(agentId).reload();
  options.logger.info(
    { agentId, skill: name, version: updated.version, from, to: transition.to, reason: transition.reason },
    "distilled skill lifecycle changed",
  );
  return { skillName: name, version: updated.version, from, to: transition.to, reason: transition.reason };
}

/** The periodic round (daily, with the lessons' lifecycle): every live distilled skill judged at `now`. */
export async function curateSkills(
  options: SkillLoopOptions,
  agentId: string,
  now: number,
): Promise<SkillLifecycleChange[]> {
  const changes: SkillLifecycleChange[] = [];
  for (const live of (await options.store.skillVersions.all(agentId)).filter((row) => row.status === "active")) {
    // Used before uses were counted (its trial counted more): its unused time starts now, not when it went live.
    if (live.lastUsedAt === null && live.trialUses > live.uses) {
      await options.store.skillVersions.startUnusedClock(live.id, now);
      continue;
    }
    try {
      const change = await judgeSkill(options, agentId, live.skillName, now);
      if (change) changes.push(change);
    } catch (error) {
      options.logger.error({ err: error, agentId, skill: live.skillName }, "distilled skill lifecycle failed");
    }
  }
  return changes;
}

/** A version going live again: a deprecated text comes back as a draft (its counters start afresh). */
export function liveAgain(content: string): string {
  return skillState(content) === "deprecated" ? withSkillState(content, "draft") : content;
}
