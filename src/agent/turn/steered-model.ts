/**
 * The turn's view of the model: every call carries the turn's signal and reports what it
 * is for (routing, thinking) and each retry, so routing, summaries, the loop and partial
 * answers are all cancelled and shown the same way without each knowing about it. When
 * the channel streams replies (`control.onAnswer`), the calls whose text may be the
 * answer (the loop's steps, the partial answer) stream it as a preview; routing JSON,
 * summaries and drafts never do.
 */
import type { TurnControl } from "../../channels/channel.js";
import type { ChatModel, ChatRequest } from "../../llm/chat-model.js";
import { answerPreviewSink } from "./answer-preview.js";

const ANSWERING: ReadonlySet<ChatRequest["purpose"]> = new Set(["react", "partial"]);

/** `loopOn`: the distillation loop is on, so citations are removed as the final answer's are. */
export function steeredModel(model: ChatModel, signal: AbortSignal, control: TurnControl, loopOn = false): ChatModel {
  let step = 0;
  const onAnswer = control.onAnswer;
  return {
    model: model.model,
    complete(request) {
      if (request.purpose === "route") control.onProgress?.({ state: "routing" });
      else if (request.purpose === "react") control.onProgress?.({ state: "thinking", step: (step += 1) });
      const stream =
        onAnswer && ANSWERING.has(request.purpose) && !request.stream
          ? { stream: answerPreviewSink(onAnswer, loopOn) }
          : {};
      return model.complete({
        ...request,
        ...stream,
        signal: request.signal ? AbortSignal.any([request.signal, signal]) : signal,
        onRetry: (retry) => {
          request.onRetry?.(retry);
          control.onProgress?.({ state: "retrying", ...retry });
        },
      });
    },
  };
}
