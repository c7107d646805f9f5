/**
 * What an operator may do to a lesson, each a ledgered change: deprecate, restore (back
 * to draft, with a clean slate for the lifecycle), pin or unpin (pinned lessons are
 * exempt from the lifecycle), and add a manual lesson (also exempt). A lesson held for
 * approval (lesson-hold.ts) is approved by restore and rejected by deprecate; text the
 * gate refuses cannot be restored or added, whoever asks.
 */
import { formatExperienceId, parseExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { lessonsLock } from "./apply-operations.js";
import { isHeld } from "./lesson-hold.js";
import { checkLessonText, contentHash, normalizeTags } from "./lesson-rules.js";

export class LessonActionError extends Error {
  override readonly name = "LessonActionError";
}

/** A lesson as people and clients see it: `exp-000123` ids and a boolean pin. */
export function lessonView(lesson: Experience) {
  return { ...lesson, id: formatExperienceId(lesson.id), pinned: lesson.pinned === 1, held: isHeld(lesson) };
}

export type LessonView = ReturnType<typeof lessonView>;

export async function findLesson(store: Store, idText: string): Promise<Experience> {
  const id = parseExperienceId(idText) ?? (/^\d+$/.test(idText) ? Number(idText) : undefined);
  const lesson = id === undefined ? undefined : await store.experiences.get(id);
  if (!lesson) throw new LessonActionError(`no lesson "${idText}"; list them with \`laoding experiences list\``);
  return lesson;
}

/** Retires a lesson; on a held lesson this is the rejection, and the reason replaces the hold. */
export async function deprecateLesson(
  store: Store,
  lesson: Experience,
  reason: string,
  actor = "operator",
): Promise<Experience> {
  if (isHeld(lesson))
    return store.experiences.change(
      lesson.id,
      { deprecatedReason: `rejected: ${reason}` },
      { action: "reject", reason, actor },
    );
  if (lesson.status === "deprecated")
    throw new LessonActionError(`${formatExperienceId(lesson.id)} is already deprecated`);
  return store.experiences.change(
    lesson.id,
    { status: "deprecated", deprecatedReason: reason },
    { action: "deprecate", reason, actor },
  );
}

/**
 * Back to draft. A lesson whose text today's gate refuses stays deprecated; one the gate
 * holds (it names a command run from the network) is approved by this, the approver kept.
 */
export async function restoreLesson(store: Store, lesson: Experience, actor = "operator"): Promise<Experience> {
  if (lesson.status !== "deprecated")
    throw new LessonActionError(`${formatExperienceId(lesson.id)} is ${lesson.status}, not deprecated`);
  const check = checkLessonText(lesson.summary);
  if (!check.ok && !check.hold)
    throw new LessonActionError(
      `${formatExperienceId(lesson.id)} cannot be restored; its text is refused: ${check.reason}`,
    );
  if (!check.ok)
    return store.experiences.change(
      lesson.id,
      { status: "draft", deprecatedReason: null, approvedBy: actor },
      { action: "approve", reason: `approved by an operator: ${check.reason}`, actor },
    );
  return store.experiences.change(
    lesson.id,
    { status: "draft", deprecatedReason: null },
    { action: "restore", reason: "restored by an operator", actor },
  );
}

export async function pinLesson(
  store: Store,
  lesson: Experience,
  pinned: boolean,
  actor = "operator",
): Promise<Experience> {
  return store.experiences.change(lesson.id, { pinned: pinned ? 1 : 0 }, { action: pinned ? "pin" : "unpin", actor });
}

export async function addManualLesson(
  store: Store,
  input: { agentId: string; summary: string; tags: string[]; category: Experience["category"] },
  actor = "operator",
): Promise<Experience> {
  const check = checkLessonText(input.summary);
  if (!check.ok && !check.hold) throw new LessonActionError(`lesson refused: ${check.reason}`);
  const hash = contentHash(input.summary);
  // The duplicate check and the write are one step, on every replica.
  return store.transaction(
    async () => {
      if (await store.experiences.byHash(input.agentId, hash))
        throw new LessonActionError("the same lesson exists already");
      // An operator who writes a command run from the network has approved it by writing it.
      return store.experiences.add({
        agentId: input.agentId,
        source: "manual",
        summary: input.summary,
        category: input.category,
        confidence: 0.8,
        status: "active",
        createdBy: actor,
        ...(check.ok ? {} : { approvedBy: actor }),
        contentHash: hash,
        tags: normalizeTags(input.tags),
      });
    },
    { lock: lessonsLock(input.agentId) },
  );
}
