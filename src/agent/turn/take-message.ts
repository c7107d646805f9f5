/**
 * Step 0: the user's message is stored (with its trace id) before anything else happens.
 * A message seen before is dropped, unless it is being taken up again after the bot (or
 * its replica) stopped mid-turn: then that turn is finished under its own trace, or, when
 * its answer was stored but not sent, the stored answer is sent.
 */
import type { Logger } from "pino";
import type { IncomingMessage } from "../../channels/channel.js";
import { childFor } from "../../log/logger.js";
import type { TurnEnv } from "./turn-context.js";

export type TakenMessage =
  | { state: "new"; traceId: string; log: Logger; userMessageId: number }
  | { state: "done"; reply: string | undefined };

export async function takeMessage(
  env: TurnEnv,
  input: { message: IncomingMessage; sessionId: number; sessionKey: string; traceId: string; isCommand: boolean },
): Promise<TakenMessage> {
  const { store, logger } = env.options;
  const { message, sessionKey } = input;
  let traceId = input.traceId;
  let log = childFor(logger, { traceId, agentId: message.agentId, sessionKey });
  const dedupeKey = message.messageId ? `${message.channel}:${message.chatId}:${message.messageId}` : undefined;
  const userMessageId = await store.messages.append({
    sessionId: input.sessionId,
    role: "user",
    kind: input.isCommand ? "command" : "chat",
    content: message.text,
    traceId,
    userId: message.userId,
    ...(dedupeKey ? { dedupeKey } : {}),
  });
  if (userMessageId !== undefined) return { state: "new", traceId, log, userMessageId };
  const earlier = message.resumed && dedupeKey ? await store.messages.byDedupeKey(dedupeKey) : undefined;
  if (!earlier) {
    log.info({ messageId: message.messageId }, "duplicate message dropped");
    return { state: "done", reply: undefined };
  }
  // Taken up again after the bot (or its replica) stopped mid-turn: finish that turn, under its trace.
  traceId = earlier.traceId;
  log = childFor(logger, { traceId, agentId: message.agentId, sessionKey });
  const answered = (await store.messages.byTrace(traceId))
    .filter((row) => row.role === "assistant" && row.kind !== "scratch")
    .at(-1);
  if (answered) {
    log.info(
      { messageId: message.messageId },
      "the answer of an interrupted turn was stored but not its reply: sending it",
    );
    return { state: "done", reply: answered.content };
  }
  log.info({ messageId: message.messageId }, "taking up a turn the bot did not finish");
  return { state: "new", traceId, log, userMessageId: earlier.id };
}
