/**
 * Turns a model's tool call into a toolhost call and its result into the observation the
 * model reads. Unknown names and unparseable arguments never reach the toolhost: they
 * are answered as UNKNOWN_TOOL / INVALID_ARGS. Failures are reported to `onFailure`: the
 * turn decides which of them are gaps (turn/turn-gaps.ts).
 */
import type { ToolCall } from "../../llm/chat-model.js";
import { formatFailure, type ToolErrorCode } from "../../toolhost/protocol.js";
import type { ToolhostClient } from "../../toolhost/client/toolhost-client.js";
import type { ToolObservation } from "./react-loop.js";

export type ToolFailureReport = {
  kind: "parse_failure" | "tool_failure";
  tool: string;
  code: ToolErrorCode;
  reason: string;
};

export function createToolExecutor(options: {
  client: ToolhostClient;
  /** Model-facing name -> toolhost name. */
  names: Map<string, string>;
  cwd: string;
  traceId: string;
  sessionId: number;
  /** Cancels a running call (the toolhost kills its command). */
  signal?: AbortSignal;
  /** Told when a call goes to the toolhost (progress). */
  onCall?: (tool: string) => void;
  /** Awaited before the observation is returned (the turn may record a gap). */
  onFailure: (report: ToolFailureReport) => void | Promise<void>;
}): (call: ToolCall) => Promise<ToolObservation> {
  return async (call) => {
    const tool = options.names.get(call.name);
    if (!tool) {
      const reason = `no tool named ${call.name}; use one of ${[...options.names.keys()].join(", ")}`;
      await options.onFailure({ kind: "parse_failure", tool: call.name, code: "UNKNOWN_TOOL", reason });
      return { ok: false, content: formatFailure({ code: "UNKNOWN_TOOL", tool: call.name, reason }) };
    }
    if (!call.arguments.ok) {
      const reason = `${call.arguments.error}; send the arguments as one JSON object`;
      await options.onFailure({ kind: "parse_failure", tool, code: "INVALID_ARGS", reason });
      return { ok: false, content: formatFailure({ code: "INVALID_ARGS", tool, reason }) };
    }
    options.onCall?.(tool);
    const result = await options.client.callTool({
      name: tool,
      args: call.arguments.value,
      traceId: options.traceId,
      cwd: options.cwd,
      sessionId: options.sessionId,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (result.ok) return { ok: true, content: result.output.length > 0 ? result.output : "(empty)" };
    const kind =
      result.error.code === "INVALID_ARGS" || result.error.code === "UNKNOWN_TOOL" ? "parse_failure" : "tool_failure";
    await options.onFailure({ kind, tool, code: result.error.code, reason: result.error.reason });
    const line = formatFailure(result.error);
    return { ok: false, content: result.output ? `${line}\n${result.output}` : line };
  };
}
