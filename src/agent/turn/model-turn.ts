/**
 * A turn with a model: under the turn's deadline and the user's cancel, run the steps;
 * a turn that fails still ends in an answer, worded from the locale tables, that says
 * what happened and what to do (a cancel, the deadline, the model, or a bug with its trace id).
 */
import { isStoreFailure } from "../../store/sql/sql-driver.js";
import type { Logger } from "pino";
import type { IncomingMessage, TurnControl } from "../../channels/channel.js";
import type { AgentDefinition } from "../../config/agents.js";
import { VARIABLES } from "../../config/variables.js";
import type { ChatModel } from "../../llm/chat-model.js";
import { ModelError } from "../../llm/model-errors.js";
import { normalizeIntentKey } from "../gaps/intent-key.js";
import type { RouteDecision } from "../routing/route-message.js";
import { modelFailureText, text } from "../texts.js";
import { runTurn } from "./run-turn.js";
import { steeredModel } from "./steered-model.js";
import type { TurnEnv, TurnKind } from "./turn-context.js";

/** TURN_TIMEOUT_MS's default, from the variables table (where it is declared). */
export const DEFAULT_TURN_TIMEOUT_MS = Number(VARIABLES.TURN_TIMEOUT_MS.defaultValue);

export type TurnOutcome = { answer: string; kind: TurnKind; route?: RouteDecision };

export type TurnStart = {
  agent: AgentDefinition;
  message: IncomingMessage;
  session: { id: number; summary: string | null; summaryUntilMessageId?: number | null | undefined };
  userMessageId: number;
  traceId: string;
  sessionKey: string;
  log: Logger;
};

export async function answerWithModel(
  env: TurnEnv,
  chatModel: ChatModel,
  start: TurnStart,
  control: TurnControl,
): Promise<TurnOutcome> {
  const turnTimeoutMs = env.options.settings.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(turnTimeoutMs);
  const signal = control.signal ? AbortSignal.any([control.signal, deadline]) : deadline;
  const model = steeredModel(chatModel, signal, control, env.options.lessons !== undefined);
  const { agent, message, session, traceId, log } = start;
  // Kept when a cancel comes after the answer: the report still says how the turn was routed.
  let route: RouteDecision | undefined;
  try {
    const gapBase = {
      agentId: agent.id,
      sessionId: session.id,
      traceId,
      userText: message.text,
      userId: message.userId,
    };
    const turn = await runTurn({
      env,
      agent,
      message,
      model,
      sessionId: session.id,
      summary: session.summary,
      summaryUntil: session.summaryUntilMessageId ?? 0,
      userMessageId: start.userMessageId,
      traceId,
      sessionKey: start.sessionKey,
      log,
      signal,
      control,
      gapBase,
    });
    route = turn.route;
    // A cancel that came while the last answer was arriving still cancels: the user asked.
    if (signal.aborted) throw signal.reason;
    return turn;
  } catch (error) {
    if (!signal.aborted) return failedTurn(env, start, error);
    const timedOut = deadline.aborted && !control.signal?.aborted;
    log.info(
      { outcome: timedOut ? "timeout" : "cancelled", timeoutMs: timedOut ? turnTimeoutMs : undefined },
      timedOut ? "turn passed its deadline; cancelled" : "turn cancelled",
    );
    const { locale } = env.options.settings;
    const routed = route ? { route } : {};
    if (timedOut)
      return {
        kind: "timeout",
        answer: text(locale, "turnTimedOut", { seconds: Math.round(turnTimeoutMs / 1000) }),
        ...routed,
      };
    return { kind: "cancelled", answer: text(locale, "turnCancelled"), ...routed };
  }
}

/** A turn that failed on its own (not cancelled): the model's failure recorded as a gap, or a bug logged. */
async function failedTurn(env: TurnEnv, start: TurnStart, error: unknown): Promise<TurnOutcome> {
  const { settings, layout } = env.options;
  const { agent, message, traceId, log } = start;
  if (error instanceof ModelError) {
    // One line: the adapter's message already says what failed; the stack adds nothing.
    log.error(
      {
        kind: error.kind,
        status: error.status,
        detail: error.message,
        ...(error.logDetail ? { logDetail: error.logDetail } : {}),
      },
      "model call failed",
    );
    await env.recordGap({
      agentId: agent.id,
      sessionId: start.session.id,
      traceId,
      intentKey: normalizeIntentKey("", message.text),
      reason: "model_failure",
      errorCode: error.kind,
      detail: error.message,
      userText: message.text,
      userId: message.userId,
    });
    return {
      kind: "model_failure",
      answer: modelFailureText(settings.locale, error, { envFile: layout.envFile, baseUrl: settings.modelBaseUrl }),
    };
  }
  // The database failed the turn (down, a failover): not an answer to store; the channel keeps the message for later.
  if (isStoreFailure(error)) throw error;
  // A bug: the user still gets an answer with a trace id to report.
  log.error({ err: error }, "turn failed");
  return { kind: "internal_error", answer: text(settings.locale, "internalError", { traceId }) };
}
