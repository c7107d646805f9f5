/**
 * Candidates for always-on rules, with their evidence. A rule is the last step of
 * Memory -> Skill -> Rule and only an operator takes it: this module only proposes.
 * Candidates are the decision-heuristic bullets of active distilled skill versions, and
 * active lessons with strong evidence (cited in many tasks that then succeeded). A rule is
 * in every prompt, so a candidate whose text the lesson gate refuses or holds (hidden
 * characters, a URL, a pipe into a shell, a command run from the network) is not offered.
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { lessonMayBeShown } from "./lesson-rules.js";
import { lessonStats } from "./lesson-stats.js";
import type { LessonStats } from "./lifecycle.js";
import { skillBullets } from "./skill-sections.js";
import { unsafeText } from "./unsafe-text.js";

export const RULE_CANDIDATE_MIN_CITED_TASKS = 5;
export const RULE_CANDIDATE_MIN_SUCCESS = 0.7;

export type RuleCandidate = { id: string; text: string; evidence: string };

export async function ruleCandidates(store: Store, agentId: string, now: number): Promise<RuleCandidate[]> {
  const active = new Set((await store.rules.active(agentId)).map((rule) => rule.text));
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
        stats.citedTasks >= RULE_CANDIDATE_MIN_CITED_TASKS &&
        stats.citing.n > 0 &&
        stats.citing.successes / stats.citing.n >= RULE_CANDIDATE_MIN_SUCCESS,
    )
    .map(({ lesson, stats }) => ({
      id: formatExperienceId(lesson.id),
      text: lesson.summary,
      evidence: `cited in ${stats.citedTasks} tasks, ${stats.citing.successes}/${stats.citing.n} succeeded; holdout ${stats.holdout.successes}/${stats.holdout.n}`,
    }));
  return [...fromSkills.filter((candidate) => unsafeText(candidate.text) === undefined), ...fromLessons].filter(
    (candidate) => candidate.text.length > 0 && !active.has(candidate.text),
  );
}
