/** Step: the conversation so far, as the model sees it. */
import { fitToBudget, summarize } from "../conversation/history.js";
import type { HistoryMessage, TurnContext } from "./turn-context.js";

/** The newest messages within the budget; older ones folded into the rolling summary. */
export async function loadHistory(turn: TurnContext): Promise<{ history: HistoryMessage[]; summary: string | null }> {
  const { store, settings } = turn.env.options;
  const rows = (await store.messages.chatAfter(turn.sessionId, turn.summaryUntil)).filter(
    (row) => row.id < turn.userMessageId,
  );
  const { recent, overflow } = fitToBudget(rows, settings.contextBudgetChars);
  let summary = turn.summary;
  if (overflow.length > 0) {
    const folded = await summarize({
      model: turn.model,
      previous: summary,
      overflow,
      traceId: turn.traceId,
      agentId: turn.agent.id,
      logger: turn.log,
    });
    if (folded) {
      summary = folded;
      await store.sessions.setSummary(turn.sessionId, folded, (overflow.at(-1) as { id: number }).id);
    }
  }
  return { history: recent.map((row) => ({ role: row.role as "user" | "assistant", content: row.content })), summary };
}
