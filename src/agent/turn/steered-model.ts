/**
 * The turn's view of the model: every call carries the turn's signal and reports what it
 * is for (routing, thinking) and each retry, so routing, summaries, the loop and partial
 * answers are all cancelled and shown the same way without each knowing about it.
 */
import type { TurnControl } from "../../channels/channel.js";
import type { ChatModel } from "../../llm/chat-model.js";

export function steeredModel(model: ChatModel, signal: AbortSignal, control: TurnControl): ChatModel {
  let step = 0;
  return {
    model: model.model,
    complete(request) {
      if (request.purpose === "route") control.onProgress?.({ state: "routing" });
      else if (request.purpose === "react") control.onProgress?.({ state: "thinking", step: (step += 1) });
      return model.complete({
        ...request,
        signal: request.signal ? AbortSignal.any([request.signal, signal]) : signal,
        onRetry: (retry) => {
          request.onRetry?.(retry);
          control.onProgress?.({ state: "retrying", ...retry });
        },
      });
    },
  };
}
