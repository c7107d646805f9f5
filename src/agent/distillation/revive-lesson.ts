/**
 * Revival: a deprecated lesson that fresh evidence supports again comes back as a draft.
 * The evidence is an ADD that repeats it (the same text, or the same words and details)
 * from a task the user corrected or gave /feedback on, begun after the lesson was
 * deprecated, whose correction or feedback states the same remedy: the user's words name
 * the lesson's flags, numbers and paths (or, for a lesson without any, a third of its
 * words). A distiller's word alone is not evidence. Its counters start afresh, as after an
 * operator's restore. A lesson the lifecycle or the distiller did not retire (an operator
 * deprecated or rejected it), a held lesson, and a lesson whose text today's checks refuse
 * are not revived: the ADD is refused, saying why.
 */
import { formatExperienceId, type Experience, type ExperienceSource } from "../../store/experiences-store.js";
import type { LedgerRow } from "../../store/ledger-store.js";
import type { Store } from "../../store/store.js";
import { isHeld } from "./lesson-hold.js";
import { terms } from "../../knowledge/keywords.js";
import { checkLessonText, concreteDetails } from "./lesson-rules.js";

/** The tasks whose evidence can bring a lesson back: a user's correction or feedback (or a recovered tool error). */
export const REVIVING_SOURCES: readonly ExperienceSource[] = ["error_correction", "review_finding"];
/** Who retires lessons by the rules, not by judgement: their deprecations may be undone by fresh evidence. */
export const RULE_ACTORS: readonly string[] = ["lifecycle", "operator-curate", "distiller"];
/** A lesson without flags, numbers or paths is stated again when the user's words hold this share of its words. */
export const REVIVAL_MIN_TERM_SHARE = 1 / 3;
/**
 * Revivals a lesson that never helped a task gets from users' words; after that only an
 * operator brings it back. Each revival starts its counters afresh, so without a cap one
 * chat could keep a harmful lesson in front of everyone by restating it after every
 * deprecation. A lesson that has made tasks succeed gets more (MAX_REVIVALS_EVER): a right
 * remedy in a task with a second, unlearned step fails three times now and then, and users'
 * corrections are how it comes back. (Judging "helped" against the tags' holdout instead
 * capped right remedies and cost the eval's full arm 2.5 points.)
 */
export const MAX_REVIVALS = 5;
/** Revivals any lesson gets from users' words, however well its tasks did. */
export const MAX_REVIVALS_EVER = 10;
/** The ledger actions that put a lesson into `deprecated`. */
const RETIRING_ACTIONS = ["deprecate", "refuse", "hold", "reject"];

export type RevivalInput = {
  store: Store;
  traceId: string;
  source: ExperienceSource;
  /** When the task that repeats the lesson began (its first message); unknown means no revival. */
  taskStartedAt?: number;
  /** The user's correction and feedback text for the task: what must state the lesson's remedy. */
  userEvidence?: string;
  actor: string;
};

/** Brings `lesson` (deprecated) back as a draft, or says why it stays deprecated. */
export async function reviveLesson(
  input: RevivalInput,
  lesson: Experience,
  confidence: number,
): Promise<{ revived: true } | { revived: false; reason: string }> {
  const id = formatExperienceId(lesson.id);
  const refuse = (why: string) => ({ revived: false as const, reason: `repeats deprecated lesson ${id}; ${why}` });
  if (isHeld(lesson)) return refuse("it is held for an operator's approval");
  const check = checkLessonText(lesson.summary);
  if (!check.ok) return refuse(`its text is refused by today's checks: ${check.reason}`);
  const ledger = await input.store.ledger.bySubject("experience", id);
  const revivals = ledger.filter((entry) => entry.action === "revive").length;
  if (revivals >= MAX_REVIVALS_EVER || (revivals >= MAX_REVIVALS && !(await helpedTasks(input.store, lesson))))
    return refuse(
      `it was revived ${revivals} times already${revivals < MAX_REVIVALS_EVER ? ", never helped a task succeed," : ""} and was deprecated again; an operator can restore it (laoding experiences restore ${id})`,
    );
  const retired = ledger
    .filter((entry) => RETIRING_ACTIONS.includes(entry.action) && statusAfter(entry) === "deprecated")
    .at(-1);
  if (!retired || retired.action !== "deprecate" || !RULE_ACTORS.includes(retired.actor))
    return refuse(`an operator retired it (${retired ? `${retired.action} by ${retired.actor}` : "no record"})`);
  if (!REVIVING_SOURCES.includes(input.source))
    return refuse("only a user's correction or feedback after its deprecation brings it back");
  if (input.taskStartedAt === undefined || input.taskStartedAt < retired.createdAt)
    return refuse("this task began before its deprecation");
  if (!statesRemedy(lesson.summary, input.userEvidence ?? ""))
    return refuse("the user's correction or feedback does not state its remedy");
  await input.store.experiences.change(
    lesson.id,
    // Afresh, as after a restore: the contradictions that retired it are in the ledger, not held against it.
    { status: "draft", deprecatedReason: null, supportCount: 1, contradictCount: 0, confidence },
    {
      action: "revive",
      reason: `fresh evidence: a correction after its deprecation states the same remedy (task ${input.traceId})`,
      actor: input.actor,
    },
  );
  return { revived: true };
}

/** The user's words name the lesson's concrete details (all of them), or a good share of its words when it has none. */
export function statesRemedy(summary: string, userWords: string): boolean {
  if (userWords.trim() === "") return false;
  const details = [...concreteDetails(summary)].map((detail) => detail.replace(/^`|`$/g, "").toLowerCase());
  const said = userWords.toLowerCase();
  if (details.length > 0) return details.every((detail) => said.includes(detail));
  const wanted = terms(summary);
  const heard = terms(userWords);
  let shared = 0;
  for (const term of wanted) if (heard.has(term)) shared += 1;
  return wanted.size > 0 && shared / wanted.size >= REVIVAL_MIN_TERM_SHARE;
}

/** The status a ledger entry left the lesson in, if it says. */
export function statusAfter(entry: Pick<LedgerRow, "after">): string | undefined {
  return jsonStatus(entry.after);
}

export function statusBefore(entry: Pick<LedgerRow, "before">): string | undefined {
  return jsonStatus(entry.before);
}

function jsonStatus(json: string | null): string | undefined {
  if (!json) return undefined;
  try {
    const value = JSON.parse(json) as { status?: unknown };
    return typeof value.status === "string" ? value.status : undefined;
  } catch {
    return undefined;
  }
}
/** Some task it was shown to succeeded, over its whole life. */
async function helpedTasks(store: Store, lesson: Experience): Promise<boolean> {
  return (await store.injections.byExperience(lesson.id)).some(
    (row) => row.arm === "treatment" && row.outcome === "success",
  );
}
