/**
 * What an MCP tool call gives the model: the server's answer as text, or the one error
 * code that says what to do next. Text parts are joined; structured content is shown as
 * JSON when there is no text; an image, audio or resource is a one-line placeholder (the
 * model's context is text here). define-tool.ts caps the output as for every tool.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "../tool-error.js";
import type { ToolOutput } from "../tools/define-tool.js";

/** The answer as the model reads it; `isError` is MCP_TOOL_ERROR with the server's text as the reason. */
export function resultOutput(server: string, result: CallToolResult): ToolOutput {
  const parts = result.content.map(describePart);
  const hasText = result.content.some((part) => part.type === "text");
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  if (result.isError)
    throw new ToolError(
      "MCP_TOOL_ERROR",
      text ? `${server}: ${text}` : `${server} reported an error without saying which`,
    );
  return { output: text || "(the tool returned no content)", truncated: false };
}

function describePart(part: CallToolResult["content"][number]): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
    case "audio":
      return `[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes, not shown]`;
    case "resource": {
      const size = "text" in part.resource ? Buffer.byteLength(part.resource.text) : base64Bytes(part.resource.blob);
      return `[resource ${part.resource.uri}${part.resource.mimeType ? ` ${part.resource.mimeType}` : ""}, ${size} bytes, not shown]`;
    }
    case "resource_link":
      return `[resource link ${part.uri}${part.mimeType ? ` ${part.mimeType}` : ""}]`;
    default:
      return `[${(part as { type: string }).type} content, not shown]`;
  }
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** Whether `error` is the SDK's error with this code (McpError's code is a plain number). */
export function isMcpError(error: unknown, code: ErrorCode): boolean {
  return error instanceof McpError && error.code === (code as number);
}

export type CallFailure = { error: ToolError; serverGone: boolean };

/**
 * A call that threw, in the codes the parent knows: TIMEOUT when the deadline passed or
 * the parent cancelled; NETWORK_REFUSED when the egress proxy refused the server's host;
 * MCP_UNAVAILABLE when the server went away or cannot be reached
 * (`serverGone` for a remote server that cannot be reached: the manager ends the session
 * so the next use connects afresh); MCP_TOOL_ERROR when the server answered with a
 * protocol error.
 */
export function callFailure(
  error: unknown,
  context: {
    server: string;
    tool: string;
    timeoutMs: number;
    signal: AbortSignal;
    /** The server's connection closed: it went away, and `endReason` says why when known. */
    closed: boolean;
    endReason: string | undefined;
  },
): CallFailure {
  const { server } = context;
  if (context.signal.aborted)
    return {
      error: new ToolError("TIMEOUT", `the call to ${server} was cancelled before it answered`),
      serverGone: false,
    };
  // The session has noticed on its own (the process exited) and says why.
  if (context.closed)
    return {
      error: new ToolError(
        "MCP_UNAVAILABLE",
        `${server} stopped during the call${context.endReason ? `: ${context.endReason}` : ""}`,
      ),
      serverGone: false,
    };
  if (error instanceof McpError) {
    if (isMcpError(error, ErrorCode.RequestTimeout))
      return {
        error: new ToolError("TIMEOUT", `${server} did not answer ${context.tool} within ${context.timeoutMs} ms`),
        serverGone: false,
      };
    return {
      error: new ToolError(
        "MCP_TOOL_ERROR",
        `${server} answered with an error: ${error.message.replace(/^MCP error -?\d+: /, "")}`,
      ),
      serverGone: false,
    };
  }
  // The egress proxy's answers, as the child's fetch throws them (net/egress-errors.ts),
  // told by name: the MCP client is used with whichever fetch the child was given.
  const name = (error as Error | undefined)?.name;
  if (name === "EgressRefusedError")
    return { error: new ToolError("NETWORK_REFUSED", (error as Error).message), serverGone: true };
  if (error instanceof StreamableHTTPError || error instanceof TypeError || name === "EgressFailedError")
    return {
      error: new ToolError("MCP_UNAVAILABLE", `cannot reach ${server}: ${describeRemoteError(error)}`),
      serverGone: true,
    };
  if ((error as Error)?.name === "ZodError")
    return {
      error: new ToolError("MCP_TOOL_ERROR", `${server} answered with something that is not an MCP tool result`),
      serverGone: false,
    };
  return {
    error: new ToolError("MCP_TOOL_ERROR", `${server}: ${(error as Error)?.message ?? String(error)}`),
    serverGone: false,
  };
}

/**
 * A remote server's failure in words: the HTTP status the SDK's error carries (401: the
 * token; 403: the egress proxy's refusal, whose reason is the body), or why fetch failed
 * (its TypeError says only "fetch failed"; its cause says ECONNREFUSED or the like).
 */
export function describeRemoteError(error: unknown): string {
  if (error instanceof StreamableHTTPError)
    return `HTTP ${error.code ?? "error"}: ${error.message.replace(/^Streamable HTTP error: /, "")}`;
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}
