/**
 * The admin API's lesson routes: the distillation loop's lessons of one agent, a lesson
 * with its ledger history, the operator's actions on it (the same functions the
 * `laoding experiences` command uses) and the effect report. A lesson of another agent is
 * not found here: ids are global, the route names the agent.
 */
import { effectReport, type EffectReport } from "../agent/distillation/effect-report.js";
import {
  deprecateLesson,
  findLesson,
  LessonActionError,
  lessonView,
  pinLesson,
  restoreLesson,
  type LessonView,
} from "../agent/distillation/operator-actions.js";
import { EXPERIENCE_STATUSES, type Experience, type ExperienceStatus } from "../store/experiences-store.js";
import type { LedgerRow } from "../store/ledger-store.js";
import type { Store } from "../store/store.js";
import { AdminError } from "./admin-errors.js";

export type LessonCounts = Record<ExperienceStatus, number>;
export type LedgerHistoryEntry = Omit<LedgerRow, "before" | "after"> & { before: unknown; after: unknown };
export type LessonDetail = { lesson: LessonView; ledger: LedgerHistoryEntry[] };
export type LessonAction = "pin" | "unpin" | "deprecate" | "restore";

export type AdminLessons = ReturnType<typeof createAdminLessons>;

export function createAdminLessons(store: Store) {
  const lessonOf = async (agentId: string, idText: string): Promise<Experience> => {
    let lesson: Experience | undefined;
    try {
      lesson = await findLesson(store, idText);
    } catch (error) {
      if (!(error instanceof LessonActionError)) throw error;
    }
    if (!lesson || lesson.agentId !== agentId)
      throw new AdminError(
        "LESSON_NOT_FOUND",
        `agent ${agentId} has no lesson "${idText.slice(0, 40)}"; GET /v1/agents/${agentId}/experiences lists them`,
      );
    return lesson;
  };
  const acting = async (run: () => Promise<Experience>): Promise<LessonView> => {
    try {
      return lessonView(await run());
    } catch (error) {
      if (error instanceof LessonActionError) throw new AdminError("LESSON_STATE", error.message);
      throw error;
    }
  };
  return {
    async counts(agentId: string): Promise<LessonCounts> {
      const counts: LessonCounts = { draft: 0, active: 0, deprecated: 0 };
      for (const lesson of await store.experiences.list(agentId)) counts[lesson.status] += 1;
      return counts;
    },
    async list(agentId: string, status: ExperienceStatus | undefined): Promise<LessonView[]> {
      return (await store.experiences.list(agentId, status)).map(lessonView);
    },
    async detail(agentId: string, idText: string): Promise<LessonDetail> {
      const lesson = lessonView(await lessonOf(agentId, idText));
      const ledger = (await store.ledger.bySubject("experience", lesson.id)).map((entry) => ({
        ...entry,
        before: parseJson(entry.before),
        after: parseJson(entry.after),
      }));
      return { lesson, ledger };
    },
    async act(agentId: string, idText: string, action: LessonAction, reason?: string): Promise<LessonView> {
      const lesson = await lessonOf(agentId, idText);
      switch (action) {
        case "pin":
        case "unpin":
          return acting(() => pinLesson(store, lesson, action === "pin"));
        case "deprecate":
          return acting(() => deprecateLesson(store, lesson, reason ?? "deprecated by an operator"));
        case "restore":
          return acting(() => restoreLesson(store, lesson));
      }
    },
    async report(agentId: string): Promise<EffectReport> {
      return effectReport(store, agentId);
    },
  };
}

export function parseLessonStatus(value: string | null): ExperienceStatus | undefined {
  if (value === null) return undefined;
  if (!(EXPERIENCE_STATUSES as readonly string[]).includes(value))
    throw new AdminError(
      "INVALID_REQUEST",
      `status must be one of ${EXPERIENCE_STATUSES.join(", ")}, not "${value.slice(0, 40)}"`,
    );
  return value as ExperienceStatus;
}

function parseJson(text: string | null): unknown {
  return text === null ? null : (JSON.parse(text) as unknown);
}
