/**
 * A lesson that names a command fetching code from the network and running it is held
 * for an operator. Held is not a status of its own: the lesson is stored `deprecated`
 * with a reason that starts with HOLD_REASON_PREFIX, so it is out of every prompt and
 * skill with no new state to get wrong, and it shows in the lists operators already read
 * (`laoding experiences list --status deprecated`, the admin page's deprecated lessons)
 * with the reason. `restore` approves it (draft, with the approver recorded, which the
 * read-time gate requires); `deprecate` rejects it (the reason becomes the rejection).
 */
import { formatExperienceId, type Experience } from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";

export const HOLD_REASON_PREFIX = "held for an operator's approval: ";

export function isHeld(lesson: Pick<Experience, "status" | "deprecatedReason">): boolean {
  return lesson.status === "deprecated" && (lesson.deprecatedReason?.startsWith(HOLD_REASON_PREFIX) ?? false);
}

/** Holds a lesson just stored; ledgered as `hold` with why. */
export function holdLesson(store: Store, lesson: Experience, why: string, actor: string): Promise<Experience> {
  const reason = `${HOLD_REASON_PREFIX}${why}; \`laoding experiences restore ${formatExperienceId(lesson.id)}\` approves it, \`deprecate\` rejects it`;
  return store.experiences.change(
    lesson.id,
    { status: "deprecated", deprecatedReason: reason },
    { action: "hold", reason, actor },
  );
}
