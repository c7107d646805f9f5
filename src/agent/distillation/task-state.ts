/**
 * What the distillation loop keeps per task while it waits for the task's outcome, and
 * the parts its pieces (lesson choice, settling) share.
 */
import type { Logger } from "pino";
import type { ChatModel } from "../../llm/chat-model.js";
import type { Store } from "../../store/store.js";
import type { TurnReport } from "../turn/turn-context.js";
import type { Locale } from "../texts.js";
import type { CurateChange } from "./curate.js";
import type { SkillLoop } from "./skill-loop.js";
import type { TaskOutcomeKind } from "./task-gates.js";

export type DistillationSettings = {
  locale: Locale;
  holdoutPercent: number;
  /** Mixed into the holdout's hash (DISTILL_HOLDOUT_SEED); absent means "". */
  holdoutSeed?: string;
  /** A task nobody followed up settles after this much quiet (DISTILL_SETTLE_QUIET_MS). */
  settleQuietMs: number;
  /** The efficacy harness's no-gates arm only: every task is distilled and operations are not checked. */
  dangerouslySkipGates?: boolean;
};

export type DistillationOptions = {
  store: Store;
  model: ChatModel | undefined;
  settings: DistillationSettings;
  logger: Logger;
  clock: { now(): number };
  skills?: SkillLoop;
  /** Told of every task the user corrected or gave negative /feedback (the gap loop records it). */
  onNegativeOutcome?: (event: NegativeOutcomeEvent) => Promise<void>;
};

/** A task the user said went wrong: a correction or negative /feedback. */
export type NegativeOutcomeEvent = {
  agentId: string;
  traceId: string;
  sessionId: number;
  userId?: string;
  userText: string;
  intentKey: string;
  kind: "corrected" | "negative_feedback";
  /** The correction or the feedback's text, at most 300 characters. */
  detail: string;
};

/** Tasks waiting for their outcome; beyond this the oldest settle at once. */
export const MAX_PENDING_TASKS = 1_000;

export type TaskState = {
  agentId: string;
  traceId: string;
  sessionKey: string;
  userText: string;
  selected: number[];
  arm?: "treatment" | "holdout";
  cited: number[];
  phantom: number;
  report?: TurnReport;
  endedAt?: number;
  correction?: string;
  feedback?: { verdict: "good" | "bad"; text: string };
};

export type SettleResult = {
  traceId: string;
  /** Null for an environment failure: evidence for nothing. */
  outcome: "success" | "failure" | null;
  outcomeKind: TaskOutcomeKind;
  skipped?: string;
  applied?: number;
  refused?: string[];
  curated: CurateChange[];
};

/** The loop's tasks: by trace id (chosen, not yet ended) and by chat (ended, waiting for an outcome). */
export type TaskBook = {
  tasks: Map<string, TaskState>;
  waiting: Map<string, TaskState>;
  remember(task: TaskState): void;
  /** Settles `task` off the caller's path; resolves once its outcome is recorded (never rejects). */
  settleInBackground(task: TaskState): Promise<void>;
};

export function newTask(fields: { agentId: string; traceId: string; sessionKey: string; userText: string }): TaskState {
  return { ...fields, selected: [], cited: [], phantom: 0 };
}
