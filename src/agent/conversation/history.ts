/**
 * What the model sees of a conversation: the newest messages that fit the character
 * budget, plus a rolling summary of everything older. When messages fall out of the
 * budget they are folded into the summary by the model, and the summary is stored on
 * the session with the id of the last message it covers.
 */
import type { Logger } from "pino";
import type { ChatModel } from "../../llm/chat-model.js";
import type { MessageRow } from "../../store/messages-store.js";

/** Splits rows (oldest first) into the newest that fit the budget and the older overflow. */
export function fitToBudget(rows: MessageRow[], budgetChars: number): { recent: MessageRow[]; overflow: MessageRow[] } {
  let used = 0;
  let index = rows.length;
  while (index > 0) {
    const size = (rows[index - 1] as MessageRow).content.length;
    if (used + size > budgetChars && index < rows.length) break;
    used += size;
    index -= 1;
  }
  return { recent: rows.slice(index), overflow: rows.slice(0, index) };
}

export const SUMMARY_MAX_CHARS = 2_000;

export async function summarize(options: {
  model: ChatModel;
  previous: string | null;
  overflow: MessageRow[];
  traceId: string;
  agentId: string;
  logger: Logger;
}): Promise<string | undefined> {
  const transcript = options.overflow.map((row) => `${row.role}: ${row.content.slice(0, 1_500)}`).join("\n");
  try {
    const response = await options.model.complete({
      purpose: "summary",
      traceId: options.traceId,
      agentId: options.agentId,
      maxTokens: 600,
      messages: [
        {
          role: "system",
          content: `Summarise a conversation for later reference in at most ${SUMMARY_MAX_CHARS} characters. Keep facts, decisions, names, paths and open tasks. Write in the conversation's language.`,
        },
        {
          role: "user",
          content: `${options.previous ? `Summary so far:\n${options.previous}\n\n` : ""}Messages to add:\n${transcript}`,
        },
      ],
    });
    const text = response.content?.trim();
    return text ? text.slice(0, SUMMARY_MAX_CHARS) : undefined;
  } catch (error) {
    options.logger.warn({ err: error }, "could not summarise older messages; they are left out of the prompt");
    return undefined;
  }
}
