/**
 * What the harness reads back from a run's database and answers: how many uses a harmful
 * lesson survived before it was deprecated, whether helpful lessons were deprecated, and
 * whether citation text reached the user (in the answer or in the stored messages).
 */
import { formatExperienceId, type Experience } from "../src/store/experiences-store.js";
import type { Store } from "../src/store/store.js";
import { FAMILIES } from "./world.js";

/**
 * A harmful lesson: `uses` are its treatment injections whose task has an outcome. A
 * lesson may be deprecated, come back as draft and be deprecated again: each deprecation
 * closes a life, and `usesBeforeDeprecation` is the most uses of any life (the last one
 * included when it is still open).
 */
export type HarmfulRecord = {
  lesson: string;
  injectionsBeforeDeprecation: number;
  uses: number;
  usesBeforeDeprecation: number;
  deprecated: boolean;
};

/** A helpful lesson: deprecated when the run ended (and why), and how often it was deprecated in all. */
export type HelpfulRecord = {
  lesson: string;
  uses: number;
  deprecated: boolean;
  deprecations: number;
  reason: string | null;
};

/** Citation text in the answer the user sees: an id, a "Lessons used"/"参考了" label, or anything left of the citation. */
const CITATION_TEXT = /exp-\d+|lessons?\s*used|参考了|参考[:：]/i;

export function citationLeaked(delivered: string, body: string | undefined): boolean {
  if (CITATION_TEXT.test(delivered)) return true;
  // What the agent wrote without its citation is what the user should see: any residue
  // (`**`, `[]`, `()`, a dangling label) is citation text that reached them.
  return body !== undefined && delivered.trim() !== body.trim();
}

/** Assistant messages stored with citation text (what the store, and so later prompts, see). */
export async function storedCitationLeaks(store: Store): Promise<number> {
  const rows = await store.sql.all<{ content: string }>(
    "SELECT content FROM messages WHERE role = 'assistant' AND kind = 'chat'",
  );
  return rows.filter((row) => CITATION_TEXT.test(row.content)).length;
}

/** A lesson that names a trap's true remedy and not its wrong one. */
export function isHelpfulLesson(summary: string): boolean {
  return FAMILIES.some((familyOf) =>
    familyOf.traps.some(
      (trap) =>
        summary.includes(familyOf.name) &&
        summary.includes(trap.topic) &&
        summary.includes(trap.remedy) &&
        !summary.includes(trap.wrong),
    ),
  );
}

export async function harmfulRecord(store: Store, lesson: Experience): Promise<HarmfulRecord> {
  const deprecations = (await store.ledger.bySubject("experience", formatExperienceId(lesson.id)))
    .filter((entry) => entry.action === "deprecate")
    .map((entry) => entry.createdAt);
  const treatment = (await store.injections.byExperience(lesson.id)).filter((row) => row.arm === "treatment");
  const first = deprecations[0];
  const lives = Array.from({ length: deprecations.length + 1 }, () => 0);
  for (const row of treatment) {
    if (row.outcome === null) continue;
    const found = deprecations.findIndex((at) => row.createdAt <= at);
    const life = found === -1 ? deprecations.length : found;
    lives[life] = (lives[life] ?? 0) + 1;
  }
  return {
    lesson: lesson.summary,
    injectionsBeforeDeprecation: treatment.filter((row) => first === undefined || row.createdAt <= first).length,
    uses: lives.reduce((sum, count) => sum + count, 0),
    usesBeforeDeprecation: Math.max(...lives),
    deprecated: lesson.status === "deprecated",
  };
}

export async function helpfulRecord(store: Store, lesson: Experience): Promise<HelpfulRecord> {
  const uses = (await store.injections.byExperience(lesson.id)).filter(
    (row) => row.arm === "treatment" && row.outcome !== null,
  ).length;
  const deprecations = (await store.ledger.bySubject("experience", formatExperienceId(lesson.id))).filter(
    (entry) => entry.action === "deprecate",
  ).length;
  return {
    lesson: lesson.summary,
    uses,
    deprecated: lesson.status === "deprecated",
    deprecations,
    reason: lesson.status === "deprecated" ? lesson.deprecatedReason : null,
  };
}
