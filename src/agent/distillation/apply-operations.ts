/**
 * The model proposes, the code applies. Every operation is validated here: aliases must
 * be ones this call handed out (the model never mints ids), enums and lengths must hold,
 * tags are normalised and always include the task's, model-only confidence is capped,
 * exact and near duplicates become REINFORCE, and text that instructs, hides characters,
 * links somewhere, pipes into a shell or condemns a tool without a remedy is refused; a
 * lesson naming a command that runs code from the network is stored held for an operator
 * (HOLD). A lesson shown to this very task is never reinforced or re-added by it: a
 * lesson cannot learn from its own injection. An ADD repeating a deprecated lesson revives
 * it when a user's correction or feedback after its deprecation supports it (REVIVE).
 */
import {
  EXPERIENCE_CATEGORIES,
  type Experience,
  type ExperienceCategory,
  type ExperienceSource,
} from "../../store/experiences-store.js";
import type { Store } from "../../store/store.js";
import { MAX_OPERATIONS, type RawOperation } from "./distiller.js";
import { holdLesson } from "./lesson-hold.js";
import { checkLessonText, contentHash, isNearDuplicate, MAX_TAGS, normalizeTags } from "./lesson-rules.js";
import { reviveLesson } from "./revive-lesson.js";

/** The highest confidence a model alone can give a lesson; evidence raises it later. */
export const MODEL_CONFIDENCE_CAP = 0.6;
export const DEFAULT_CONFIDENCE = 0.4;

export type AppliedOperation =
  | { op: "ADD"; experienceId: number }
  /** An ADD stored held for an operator: not live until approved. */
  | { op: "HOLD"; experienceId: number; why: string }
  | { op: "REINFORCE"; experienceId: number; why?: string }
  | { op: "CONTRADICT"; experienceId: number }
  /** An ADD that repeats a deprecated lesson, from fresh evidence: the lesson is a draft again. */
  | { op: "REVIVE"; experienceId: number };
export type RefusedOperation = { index: number; reason: string };

export type ApplyInput = {
  store: Store;
  agentId: string;
  traceId: string;
  source: ExperienceSource;
  taskTags: string[];
  aliases: ReadonlyMap<string, Experience>;
  /** Lessons shown to this task (treatment): never reinforced or re-added from it. */
  injectedIds: ReadonlySet<number>;
  /** When the task began: a deprecated lesson it repeats is revived only by a task begun after the deprecation. */
  taskStartedAt?: number;
  /** The user's correction and feedback text: a revival needs it to state the lesson's remedy. */
  userEvidence?: string;
  operations: RawOperation[];
  actor: string;
  /**
   * The efficacy harness's no-gates arm only: text checks, the confidence cap and the
   * own-injection refusal are skipped (the database's own constraints still hold).
   */
  dangerouslySkipChecks?: boolean;
};

/** What a lesson write reads first (duplicates, the lesson's state): replicas take turns on an agent's lessons. */
export const lessonsLock = (agentId: string) => `lessons:${agentId}`;

export async function applyOperations(
  input: ApplyInput,
): Promise<{ applied: AppliedOperation[]; refused: RefusedOperation[] }> {
  const applied: AppliedOperation[] = [];
  const refused: RefusedOperation[] = [];
  const touched = new Set<number>();
  // One operation at a time, in order, each in a transaction of its own: it sees what the ones
  // before it wrote, and its duplicate check and its write are one step.
  for (const [index, operation] of input.operations.entries()) {
    const outcome = await input.store.transaction(() => applyOne(input, operation, index, touched), {
      lock: lessonsLock(input.agentId),
    });
    if ("reason" in outcome) refused.push({ index, reason: outcome.reason });
    else applied.push(outcome);
  }
  return { applied, refused };
}

async function applyOne(
  input: ApplyInput,
  operation: RawOperation,
  index: number,
  touched: Set<number>,
): Promise<AppliedOperation | { reason: string }> {
  const { store } = input;
  const refuse = (reason: string) => ({ reason });
  if (index >= MAX_OPERATIONS) return refuse(`more than ${MAX_OPERATIONS} operations`);
  const op = typeof operation.op === "string" ? operation.op.toUpperCase() : "";
  if (op === "ADD") {
    const lesson = validateAdd(operation, input);
    if (!lesson.ok) return refuse(lesson.reason);
    const same =
      (await store.experiences.byHash(input.agentId, lesson.hash)) ??
      (input.dangerouslySkipChecks ? undefined : await nearDuplicate(store, input.agentId, lesson.summary));
    if (same) {
      if (input.injectedIds.has(same.id) && !input.dangerouslySkipChecks)
        return refuse(`repeats ${same.id}, which this task was shown`);
      if (touched.has(same.id)) return refuse("a second operation on the same lesson");
      if (same.status === "deprecated") {
        const revival = await reviveLesson(input, same, lesson.confidence);
        if (!revival.revived) return refuse(revival.reason);
        touched.add(same.id);
        return { op: "REVIVE", experienceId: same.id };
      }
      touched.add(same.id);
      await reinforce(input, same, "a duplicate ADD became REINFORCE");
      return { op: "REINFORCE", experienceId: same.id, why: "duplicate" };
    }
    const created = await store.transaction(async () => {
      const stored = await store.experiences.add({
        agentId: input.agentId,
        source: input.source,
        taskTraceId: input.traceId,
        summary: lesson.summary,
        category: lesson.category,
        confidence: lesson.confidence,
        createdBy: input.actor,
        contentHash: lesson.hash,
        tags: lesson.tags,
      });
      return lesson.hold ? holdLesson(store, stored, lesson.hold, input.actor) : stored;
    });
    touched.add(created.id);
    return lesson.hold
      ? { op: "HOLD", experienceId: created.id, why: lesson.hold }
      : { op: "ADD", experienceId: created.id };
  }
  if (op === "REINFORCE" || op === "CONTRADICT") {
    const alias = typeof operation.target === "string" ? operation.target.trim().toUpperCase() : "";
    const target = input.aliases.get(alias);
    if (!target) return refuse(`unknown target "${String(operation.target)}"; only the E-numbers given may be used`);
    if (touched.has(target.id)) return refuse("a second operation on the same lesson");
    touched.add(target.id);
    if (op === "REINFORCE") {
      if (input.injectedIds.has(target.id) && !input.dangerouslySkipChecks)
        return refuse(`${alias} was shown to this task; its citations already count`);
      await reinforce(input, target);
      return { op: "REINFORCE", experienceId: target.id };
    }
    const reason =
      typeof operation.reason === "string" ? operation.reason.slice(0, 200) : "contradicted by a later task";
    const current = (await store.experiences.get(target.id)) as Experience;
    await store.experiences.change(
      target.id,
      { contradictCount: current.contradictCount + 1, confidence: round(Math.max(0.05, current.confidence - 0.1)) },
      { action: "contradict", reason: `${reason} (task ${input.traceId})`, actor: input.actor },
    );
    return { op: "CONTRADICT", experienceId: target.id };
  }
  return refuse(`unknown operation "${String(operation.op)}"; use ADD, REINFORCE or CONTRADICT`);
}

type ValidLesson =
  | {
      ok: true;
      summary: string;
      category: ExperienceCategory;
      confidence: number;
      tags: string[];
      hash: string;
      hold?: string;
    }
  | { ok: false; reason: string };

function validateAdd(operation: RawOperation, input: ApplyInput): ValidLesson {
  if (typeof operation.summary !== "string") return { ok: false, reason: "ADD needs a summary" };
  const skip = input.dangerouslySkipChecks === true;
  const summary = skip ? operation.summary.trim().padEnd(20, ".").slice(0, 200) : operation.summary.trim();
  const check = checkLessonText(summary);
  if (!check.ok && !check.hold && !skip) return { ok: false, reason: check.reason };
  const hold = !check.ok && check.hold && !skip ? check.reason : undefined;
  const given = typeof operation.category === "string" ? operation.category.trim().toLowerCase() : "";
  const category = skip && !(EXPERIENCE_CATEGORIES as readonly string[]).includes(given) ? "pattern" : given;
  if (!(EXPERIENCE_CATEGORIES as readonly string[]).includes(category))
    return {
      ok: false,
      reason: `category "${String(operation.category)}" is not one of ${EXPERIENCE_CATEGORIES.join(", ")}`,
    };
  const confidence =
    typeof operation.confidence === "number" && Number.isFinite(operation.confidence)
      ? operation.confidence
      : DEFAULT_CONFIDENCE;
  if (confidence < 0 || confidence > 1) return { ok: false, reason: `confidence ${confidence} is outside 0-1` };
  const modelTags = Array.isArray(operation.tags)
    ? operation.tags.filter((tag): tag is string => typeof tag === "string")
    : [];
  // The task's tags always come first: they are what later tasks are matched on.
  const tags = [...new Set([...input.taskTags, ...normalizeTags(modelTags)])].slice(0, MAX_TAGS).sort();
  return {
    ok: true,
    summary,
    category: category as ExperienceCategory,
    confidence: round(skip ? confidence : Math.min(confidence, MODEL_CONFIDENCE_CAP)),
    tags,
    hash: contentHash(summary),
    ...(hold ? { hold } : {}),
  };
}

/** A live lesson saying the same thing, else a deprecated one (which only fresh evidence revives). */
async function nearDuplicate(store: Store, agentId: string, summary: string): Promise<Experience | undefined> {
  const similar = (await store.experiences.list(agentId)).filter((other) => isNearDuplicate(summary, other.summary));
  return similar.find((other) => other.status !== "deprecated") ?? similar[0];
}

async function reinforce(input: ApplyInput, lesson: Experience, reason?: string): Promise<void> {
  const current = (await input.store.experiences.get(lesson.id)) as Experience;
  const cap = current.status === "active" ? 0.9 : MODEL_CONFIDENCE_CAP;
  await input.store.experiences.change(
    lesson.id,
    {
      supportCount: current.supportCount + 1,
      confidence: round(Math.min(cap, Math.max(current.confidence, current.confidence + 0.05))),
    },
    {
      action: "reinforce",
      reason: `${reason ?? "supported by a later task"} (task ${input.traceId})`,
      actor: input.actor,
    },
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
