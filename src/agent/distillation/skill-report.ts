/**
 * What `laoding experiences skills` says of each distilled skill: its state (the live
 * version's SKILL.md `status:`), the live version and its trial, the lifecycle's evidence
 * (uses, successes, last use) and why it is in that state (the last lifecycle step in
 * the ledger, with its reason).
 */
import type { SkillVersion } from "../../store/skill-versions-store.js";
import type { Store } from "../../store/store.js";
import { RATCHET } from "./skill-ratchet.js";
import { skillState, type SkillState } from "./skill-lifecycle.js";

export type SkillStateView = {
  skillName: string;
  /** `none`: no version ever went live (every one was rejected). */
  state: SkillState | "none";
  liveVersion: number | null;
  trial: { uses: number; successes: number; length: number } | null;
  uses: number;
  successes: number;
  successRate: number | null;
  lastUsedAt: number | null;
  why: { action: string; reason: string | null; version: string; at: number } | null;
};

/** Ledger steps that put a skill in its state; other steps (a rejected candidate) explain only a skill with nothing live. */
const LIFECYCLE_ACTIONS = new Set([
  "promote",
  "deprecate",
  "retract",
  "restore",
  "rollback",
  "reactivate",
  "activate",
  "force-activate",
]);

export async function distilledSkillStates(store: Store, agentId: string): Promise<SkillStateView[]> {
  const bySkill = new Map<string, SkillVersion[]>();
  for (const row of await store.skillVersions.all(agentId))
    bySkill.set(row.skillName, [...(bySkill.get(row.skillName) ?? []), row]);
  const views: SkillStateView[] = [];
  for (const [skillName, versions] of bySkill) {
    const live = versions.find((row) => row.status === "active");
    const ledger = [];
    for (const row of versions) ledger.push(...(await store.ledger.bySubject("skill", `${skillName}@v${row.version}`)));
    const steps = ledger
      .sort((left, right) => left.id - right.id)
      .filter((entry) => (live ? LIFECYCLE_ACTIONS.has(entry.action) : entry.action !== "candidate"));
    const last = steps.at(-1);
    views.push({
      skillName,
      state: live
        ? skillState(live.content)
        : versions.some((row) => row.status === "rolled_back")
          ? "deprecated"
          : "none",
      liveVersion: live?.version ?? null,
      trial: live ? { uses: live.trialUses, successes: live.trialSuccesses, length: RATCHET.trialUses } : null,
      uses: live?.uses ?? 0,
      successes: live?.successes ?? 0,
      successRate: live && live.uses > 0 ? live.successes / live.uses : null,
      lastUsedAt: live?.lastUsedAt ?? null,
      why: last
        ? { action: last.action, reason: last.reason, version: last.subjectId.split("@")[1] ?? "", at: last.createdAt }
        : null,
    });
  }
  return views;
}

/** The skill's lines for people: state and numbers, then why. */
export function skillStateLines(view: SkillStateView, time: (ms: number) => string): string[] {
  const trial = view.trial
    ? view.trial.uses < view.trial.length
      ? ` · on trial ${view.trial.successes}/${view.trial.uses} of ${view.trial.length}`
      : ` · trial ${view.trial.successes}/${view.trial.uses} done`
    : "";
  const rate = view.successRate === null ? "" : ` (${Math.round(view.successRate * 100)}%)`;
  const used = view.liveVersion === null ? "" : ` · used ${view.uses}, ${view.successes} succeeded${rate}`;
  const last = view.lastUsedAt === null ? "" : ` · last used ${time(view.lastUsedAt)}`;
  const live = view.liveVersion === null ? "nothing live" : `v${view.liveVersion} live`;
  const why = view.why
    ? `    why: ${view.why.reason ?? view.why.action} (${view.why.action} ${view.why.version}, ${time(view.why.at)})`
    : "    why: -";
  return [`  ${view.skillName} [${view.state}] ${live}${trial}${used}${last}`, why];
}
