/**
 * Candidates for always-on rules, with their evidence. A rule is the last step of
 * Memory -> Skill -> Rule and only an operator takes it: this module only proposes.
 * Candidates are the decision-heuristic bullets of active distilled skill versions, and
 * active lessons with strong evidence (shown to many tasks that then succeeded; outcomes, not
 * citations, are the evidence). A rule is
 * in every prompt, so a candidate whose text the lesson gate refuses or holds (hidden
 * characters, a URL, a pipe into a shell, a command run from the network) is not offered.
 * `laoding rules` and the admin API both propose and accept through this module.
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { RuleRow } from "../../store/rules-store.js";
import type { Store } from "../../store/store.js";
import { lessonMayBeShown } from "./lesson-rules.js";
import { lessonStats } from "./lesson-stats.js";
import type { LessonStats } from "./lifecycle.js";
import { skillBullets } from "./skill-sections.js";
import { unsafeText } from "./unsafe-text.js";

/** Uses: tasks the lesson was shown to that ended with an outcome. */
export const RULE_CANDIDATE_MIN_USES = 5;
export const RULE_CANDIDATE_MIN_SUCCESS = 0.7;

export type RuleCandidate = { id: string; text: string; evidence: string };

/** Why an accept was refused before the rules store saw it. */
export class RuleCandidateError extends Error {
  override readonly name = "RuleCandidateError";
  constructor(
    readonly kind: "unknown-candidate" | "refused",
    message: string,
  ) {
    super(message);
  }
}

export async function ruleCandidates(store: Store, agentId: string, now: number): Promise<RuleCandidate[]> {
  const rules = await store.rules.active(agentId);
  // A candidate accepted in shorter words is a rule already: its id is the rule's source.
  const taken = new Set([
    ...rules.map((rule) => rule.text),
    ...rules.flatMap((rule) => (rule.source ? [rule.source] : [])),
  ]);
  const versions = await store.sql.all<{
    skillName: string;
    version: number;
    content: string;
    trialUses: number;
    trialSuccesses: number;
  }>(
    "SELECT skill_name AS skillName, version, content, trial_uses AS trialUses, trial_successes AS trialSuccesses FROM skill_versions WHERE agent_id = ? AND status = 'active'",
    [agentId],
  );
  // Sorted here, by code point, as SQLite's ORDER BY did: PostgreSQL's collation may order names otherwise.
  versions.sort((left, right) => (left.skillName < right.skillName ? -1 : left.skillName > right.skillName ? 1 : 0));
  const fromSkills = versions.flatMap((version) =>
    skillBullets(version.content, "heuristics").map((bullet, index) => ({
      id: `${version.skillName}@v${version.version}#${index + 1}`,
      text: bullet.replace(/\s*\[exp-\d+(?:,\s*exp-\d+)*\]\s*$/i, "").trim(),
      evidence: `heuristic of active skill ${version.skillName} v${version.version} (trial ${version.trialSuccesses}/${version.trialUses} successes); cites ${(bullet.match(/exp-\d+/gi) ?? []).join(", ") || "no lessons"}`,
    })),
  );
  const shown = (await store.experiences.list(agentId, "active")).filter(lessonMayBeShown);
  const withStats: { lesson: Experience; stats: LessonStats }[] = [];
  for (const lesson of shown) withStats.push({ lesson, stats: await lessonStats(store, lesson, now) });
  const fromLessons = withStats
    .filter(
      ({ stats }) =>
        (stats.uses ?? 0) >= RULE_CANDIDATE_MIN_USES &&
        (stats.successes ?? 0) / (stats.uses ?? 1) >= RULE_CANDIDATE_MIN_SUCCESS,
    )
    .map(({ lesson, stats }) => ({
      id: formatExperienceId(lesson.id),
      text: lesson.summary,
      evidence: `shown to ${stats.uses} tasks, ${stats.successes} succeeded (cited in ${stats.citedTasks}); holdout ${stats.holdout.successes}/${stats.holdout.n}`,
    }));
  return [...fromSkills.filter((candidate) => unsafeText(candidate.text) === undefined), ...fromLessons].filter(
    (candidate) => candidate.text.length > 0 && !taken.has(candidate.text) && !taken.has(candidate.id),
  );
}

/**
 * Makes a current candidate a rule of the agent, in its own words or the operator's shorter
 * `text`; the rules store then applies the limits (300 characters, 5 active rules) and
 * ledgers the change with `actor`. The operator's wording passes the same check as learned
 * text (hidden characters are invisible to them too); a network command the operator
 * writes is theirs to approve, so it is not held.
 */
export async function acceptRuleCandidate(
  store: Store,
  agentId: string,
  candidateId: string,
  options: { text?: string | undefined; actor: string; now: number },
): Promise<RuleRow> {
  const candidate = (await ruleCandidates(store, agentId, options.now)).find((item) => item.id === candidateId);
  if (!candidate)
    throw new RuleCandidateError(
      "unknown-candidate",
      `no candidate "${candidateId.slice(0, 80)}" for agent ${agentId}: never proposed, or a rule already`,
    );
  const text = options.text ?? candidate.text;
  const unsafe = unsafeText(text);
  if (unsafe && !unsafe.hold) throw new RuleCandidateError("refused", `rule refused: it ${unsafe.reason}`);
  return store.rules.add(agentId, text, candidate.id, options.actor);
}
