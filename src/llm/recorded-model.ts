/** Wraps a model so every call's token usage and outcome is recorded. */
import type { ModelCallRecord } from "../store/model-calls-store.js";
import type { ChatModel } from "./chat-model.js";
import { ModelError } from "./model-errors.js";

export type ModelCallSink = (record: ModelCallRecord) => void;

export function recordedModel(model: ChatModel, sink: ModelCallSink, clock: { now(): number } = Date): ChatModel {
  return {
    model: model.model,
    async complete(request) {
      const started = clock.now();
      const base = {
        purpose: request.purpose,
        model: model.model,
        ...(request.traceId ? { traceId: request.traceId } : {}),
        ...(request.agentId ? { agentId: request.agentId } : {}),
      };
      try {
        const response = await model.complete(request);
        sink({ ...base, ok: true, durationMs: clock.now() - started, ...(response.usage ?? {}) });
        return response;
      } catch (error) {
        sink({
          ...base,
          ok: false,
          errorKind: error instanceof ModelError ? error.kind : "unknown",
          durationMs: clock.now() - started,
        });
        throw error;
      }
    },
  };
}
