/**
 * Step: the answer. A final one with its citation line removed, or, out of steps, an
 * honest partial one: the model says without tools what it found and what is missing.
 */
import type { ChatMessage, ChatResponse, ToolSpec } from "../../llm/chat-model.js";
import type { ReactLoopResult } from "../react/react-loop.js";
import type { RouteDecision } from "../routing/route-message.js";
import { modelErrorWords, text, type Locale } from "../texts.js";
import { withoutCitations } from "./lessons.js";
import type { TurnContext } from "./turn-context.js";
import { recordTurnGap } from "./turn-gaps.js";

export type TurnAnswer = { answer: string; route: RouteDecision; kind: "answered" | "step_budget" };

/** The answer the loop ended with; out of steps, a gap and a partial answer. */
export async function answerTurn(
  turn: TurnContext,
  route: RouteDecision,
  result: ReactLoopResult,
  tools: ToolSpec[],
): Promise<TurnAnswer> {
  const { locale } = turn.env.options.settings;
  if (result.stop === "final") {
    const answer = (await withoutCitations(turn, result.answer)).trim() || text(locale, "emptyAnswer");
    if (result.interrupted) turn.log.warn({ ...result.interrupted, chars: answer.length }, "answer stream cut off");
    return { answer: withCutOffNote(answer, result.interrupted, locale), route, kind: "answered" };
  }
  turn.log.warn({ steps: result.steps }, "step budget exhausted");
  await recordTurnGap(turn, route, {
    reason: "step_budget",
    detail: `tools used: ${result.toolsUsed.join(", ")}`,
  });
  const partial = await partialAnswer({
    turn,
    messages: result.messages,
    tools,
    steps: result.steps,
    toolsUsed: result.toolsUsed,
  });
  return { answer: await withoutCitations(turn, partial), route, kind: "step_budget" };
}

/** Out of steps: the model says, without tools, what it found and what is missing. */
async function partialAnswer(input: {
  turn: TurnContext;
  messages: ChatMessage[];
  tools: ToolSpec[];
  steps: number;
  toolsUsed: string[];
}): Promise<string> {
  const { turn } = input;
  const { locale } = turn.env.options.settings;
  const note = text(locale, "stepBudget", { steps: input.steps });
  try {
    const response = await turn.model.complete({
      purpose: "partial",
      traceId: turn.traceId,
      agentId: turn.agent.id,
      messages: [
        ...input.messages,
        {
          role: "user",
          content:
            "You have run out of steps. Without calling tools, tell me honestly what you found and did so far, and what is still missing.",
        },
      ],
      tools: input.tools,
      toolChoice: "none",
    });
    if (response.content?.trim())
      return withCutOffNote(`${note}\n\n${response.content.trim()}`, response.interrupted, locale);
  } catch (error) {
    turn.log.warn({ err: error }, "could not get a partial answer from the model");
  }
  return text(locale, "stepBudgetFallback", {
    steps: input.steps,
    done: [...new Set(input.toolsUsed)].join(", ") || "-",
  });
}

/** A streamed answer whose connection broke after part of it was shown ends with a note saying so. */
function withCutOffNote(answer: string, interrupted: ChatResponse["interrupted"], locale: Locale): string {
  if (!interrupted) return answer;
  return `${answer}\n\n${text(locale, "answerInterrupted", { reason: modelErrorWords(locale, interrupted.kind) })}`;
}
