/** Step: the distillation loop's lessons, chosen before routing and their citations taken out of the answer. */
import { extractCitations } from "../distillation/citations.js";
import type { PromptSection } from "../prompt/system-prompt.js";
import type { TurnContext } from "./turn-context.js";

/** Before routing: the task's lessons (none when held out); a failure here never breaks the turn. */
export async function chooseLessons(turn: TurnContext): Promise<PromptSection | undefined> {
  try {
    return await turn.env.options.lessons?.select({
      agentId: turn.agent.id,
      traceId: turn.traceId,
      sessionKey: turn.sessionKey,
      userText: turn.message.text,
    });
  } catch (error) {
    turn.log.error({ err: error }, "could not choose lessons; answering without them");
    return undefined;
  }
}

/** Citations (in any form a model writes them) are bookkeeping: parsed and removed before the user or the store sees the answer. */
export async function withoutCitations(turn: TurnContext, answer: string): Promise<string> {
  const { lessons } = turn.env.options;
  // Even with the loop off, a model that learned the habit never shows the line to a user
  // (an unlabelled `[exp-3]` is left alone: nobody asked the model to cite).
  if (!lessons) return extractCitations(answer).answer;
  try {
    return await lessons.strip({ agentId: turn.agent.id, traceId: turn.traceId }, answer);
  } catch (error) {
    turn.log.error({ err: error }, "could not read the lesson citations");
    return answer;
  }
}
