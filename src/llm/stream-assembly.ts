/**
 * Puts a streamed chat completion back together: the chunks' deltas become the message a
 * non-streaming server would have sent, which `fromWire` then reads, so a streamed reply
 * and a non-streamed one give the same ChatResponse by construction. Text is passed on to
 * the sink as it arrives (content only, never reasoning or tool-call arguments), and each
 * tool call is announced once, when its name arrives.
 *
 * Servers differ in how they stream tool calls, and all of these give the same call:
 * - OpenAI: `id` and `name` in the call's first delta, `arguments` in pieces after it;
 * - the whole call in one delta (Ollama), or `id`/`name` repeated in every delta;
 * - the whole `arguments` text repeated in every delta instead of pieces (seen with some
 *   vLLM tool parsers and proxies), or arguments sent as a JSON object instead of text;
 * - no `index` on the deltas (older Ollama): a delta with a new id starts a new call, one
 *   without an id continues the last call.
 * `finish_reason: ""` (Ollama) counts as no finish reason; usage is taken from the chunk
 * that carries it (the last one, with `stream_options.include_usage`).
 */
import type { ModelStreamSink } from "./chat-model.js";

type CallParts = {
  id: string | undefined;
  name: string;
  /** Undefined until an `arguments` field arrives (a server that never sends one: see `callsWithoutArguments`). */
  arguments: string | undefined;
  announced: boolean;
};

type Delta = {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
};

export type StreamAssembly = ReturnType<typeof createStreamAssembly>;

export function createStreamAssembly(sink: ModelStreamSink | undefined) {
  let content: string | undefined;
  let reasoningContent: string | undefined;
  let reasoning: string | undefined;
  let finishReason: string | null = null;
  let model: string | undefined;
  let usage: unknown;
  let sawChoice = false;
  let shownText = false;
  const calls = new Map<number, CallParts>();

  function addToolCall(raw: unknown) {
    const delta = raw as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const id = typeof delta.id === "string" && delta.id !== "" ? delta.id : undefined;
    const index = indexOf(delta.index, id);
    const call = calls.get(index) ?? { id: undefined, name: "", arguments: undefined, announced: false };
    calls.set(index, call);
    call.id ??= id;
    const name = delta.function?.name;
    if (typeof name === "string" && name !== "" && call.name === "") call.name = name;
    if (call.name !== "" && !call.announced) {
      call.announced = true;
      sink?.onToolCall(call.name);
    }
    call.arguments = joinArguments(call.arguments, delta.function?.arguments);
  }

  /** The call a delta belongs to: its `index`, else the call with its id, else a new call (new id) or the last one. */
  function indexOf(rawIndex: unknown, id: string | undefined): number {
    if (typeof rawIndex === "number" && Number.isInteger(rawIndex)) return rawIndex;
    const known = [...calls.entries()].find(([, call]) => id !== undefined && call.id === id);
    if (known) return known[0];
    const last = Math.max(-1, ...calls.keys());
    return id !== undefined || last === -1 ? last + 1 : last;
  }

  return {
    /** One parsed `data:` payload (a chat.completion.chunk). */
    add(payload: unknown) {
      const chunk = payload as { model?: unknown; usage?: unknown; choices?: unknown };
      if (model === undefined && typeof chunk.model === "string" && chunk.model !== "") model = chunk.model;
      if (chunk.usage && typeof chunk.usage === "object") usage = chunk.usage;
      if (!Array.isArray(chunk.choices)) return;
      for (const rawChoice of chunk.choices as unknown[]) {
        const choice = rawChoice as { index?: unknown; delta?: Delta | null; finish_reason?: unknown };
        if (typeof choice.index === "number" && choice.index !== 0) continue;
        sawChoice = true;
        const delta = choice.delta ?? {};
        if (typeof delta.content === "string") {
          content = (content ?? "") + delta.content;
          if (delta.content !== "") {
            shownText = true;
            sink?.onText(delta.content);
          }
        }
        if (typeof delta.reasoning_content === "string")
          reasoningContent = (reasoningContent ?? "") + delta.reasoning_content;
        if (typeof delta.reasoning === "string") reasoning = (reasoning ?? "") + delta.reasoning;
        if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as unknown[]) addToolCall(call);
        if (typeof choice.finish_reason === "string" && choice.finish_reason !== "")
          finishReason = choice.finish_reason;
      }
    },
    /** Some text reached the sink: a failure from here on cannot be hidden by asking again. */
    get shownText() {
      return shownText;
    },
    get finished() {
      return finishReason !== null;
    },
    get sawChoice() {
      return sawChoice;
    },
    /** Named tool calls whose arguments never arrived (a vLLM tool parser bug loses them when streaming). */
    get callsWithoutArguments() {
      return [...calls.values()].filter((call) => call.name !== "" && call.arguments === undefined).length;
    },
    textSoFar: () => content ?? "",
    reasoningSoFar: () => reasoningContent ?? reasoning,
    model: () => model,
    /** The completion a non-streaming server would have answered with, for `fromWire`. */
    completion(): unknown {
      const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      const message: Record<string, unknown> = { role: "assistant", content: content ?? null };
      if (reasoningContent !== undefined) message.reasoning_content = reasoningContent;
      if (reasoning !== undefined) message.reasoning = reasoning;
      if (ordered.length > 0)
        message.tool_calls = ordered.map((call) => ({
          ...(call.id !== undefined ? { id: call.id } : {}),
          type: "function",
          function: { name: call.name, ...(call.arguments !== undefined ? { arguments: call.arguments } : {}) },
        }));
      return {
        ...(model !== undefined ? { model } : {}),
        choices: [{ message, finish_reason: finishReason }],
        ...(usage !== undefined ? { usage } : {}),
      };
    },
  };
}

/**
 * The arguments so far with one more delta's: pieces are appended; a piece that repeats
 * everything so far and more (a server sending the whole text each time) replaces it; an
 * object (not text) is the whole arguments, as JSON.
 */
export function joinArguments(sofar: string | undefined, piece: unknown): string | undefined {
  if (piece === undefined || piece === null) return sofar;
  if (typeof piece !== "string") return JSON.stringify(piece);
  if (sofar === undefined) return piece;
  // Valid JSON never continues with its own beginning: text that starts with all of what came
  // before is the whole arguments again, not the next piece.
  if (sofar.trim() !== "" && piece.startsWith(sofar)) return piece;
  return sofar + piece;
}
