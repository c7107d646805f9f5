/**
 * What a turn's steps share. `TurnEnv` is built once per orchestrator (its options, the
 * gap recorder, the last prompt of each chat for `/context`); `TurnContext` once per
 * model-backed turn and passed to every step, so a step's inputs are visible at its call.
 */
import type { Logger } from "pino";
import type { IncomingMessage, TurnControl } from "../../channels/channel.js";
import type { AgentDefinition } from "../../config/agents.js";
import type { ChatModel, ToolSpec } from "../../llm/chat-model.js";
import type { GapEvent, GapRecorder } from "../gaps/gap-recorder.js";
import type { OrchestratorOptions } from "../orchestrator.js";
import type { PromptSources } from "../prompt/compose-prompt.js";
import type { PromptManifest, PromptSection } from "../prompt/system-prompt.js";
import type { RouteDecision } from "../routing/route-message.js";

/** How a turn ended: the distillation loop's gates read it. */
export type TurnKind =
  | "answered"
  | "step_budget"
  | "cancelled"
  | "timeout"
  | "model_failure"
  | "internal_error"
  | "no_model";

export type TurnReport = {
  message: IncomingMessage;
  traceId: string;
  sessionId: number;
  sessionKey: string;
  kind: TurnKind;
  route?: RouteDecision;
  answer: string;
};

/**
 * Lessons for a task (the distillation loop): chosen before routing and shown as a prompt
 * section (or held out), and the citation line taken out of the answer before anyone
 * sees or stores it.
 */
export type TurnLessons = {
  select(task: {
    agentId: string;
    traceId: string;
    sessionKey: string;
    userText: string;
  }): PromptSection | undefined | Promise<PromptSection | undefined>;
  strip(task: { agentId: string; traceId: string }, answer: string): string | Promise<string>;
};

/** The orchestrator's parts every turn uses. */
export type TurnEnv = {
  options: OrchestratorOptions;
  recordGap: GapRecorder;
  promptSources: PromptSources;
  /** The manifest of each chat's last prompt, by session key (`/context`). */
  lastPrompts: Map<string, PromptManifest>;
};

/** Everything one model-backed turn works with; built once per turn. */
export type TurnContext = {
  env: TurnEnv;
  agent: AgentDefinition;
  message: IncomingMessage;
  model: ChatModel;
  sessionId: number;
  summary: string | null;
  summaryUntil: number;
  userMessageId: number;
  traceId: string;
  sessionKey: string;
  log: Logger;
  signal: AbortSignal;
  control: TurnControl;
  /** What every gap of this turn carries. */
  gapBase: Omit<GapEvent, "intentKey" | "reason">;
};

export type TurnTools = {
  specs: ToolSpec[];
  names: Map<string, string>;
  /** What `/context` says of the agent's MCP servers this turn. */
  notes?: NonNullable<PromptManifest["tools"]>;
};
export type HistoryMessage = { role: "user" | "assistant"; content: string };
