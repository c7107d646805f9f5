/**
 * The toolhost wire contract, imported by both the parent and the child and importing
 * nothing of ours: one descriptor per JSON-RPC method (name, params schema, result
 * schema), the tool error codes, and the one-line observation format.
 *
 * Two tiers of errors: a tool failure is a normal result with `ok: false`; JSON-RPC
 * errors are only for protocol faults (unknown method, invalid params).
 */
import { z } from "zod";

export const PROTOCOL_VERSION = 1;

/** Default maximum frame size either side accepts (Content-Length). */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

export const ERROR_CODES = [
  "INVALID_ARGS",
  "UNKNOWN_TOOL",
  "PATH_NOT_ALLOWED",
  "PATH_NOT_FOUND",
  "PATH_IS_DIRECTORY",
  "NOT_A_DIRECTORY",
  "FILE_TOO_LARGE",
  "COMMAND_NOT_ALLOWED",
  "TIMEOUT",
  "EXIT_NONZERO",
  "TOOLHOST_UNAVAILABLE",
  "TOOLHOST_CRASHED",
  "INTERNAL",
] as const;
export type ToolErrorCode = (typeof ERROR_CODES)[number];

/** JSON-RPC error codes for protocol faults (the standard ones). */
export const RPC_ERRORS = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

const toolFailure = z.object({
  code: z.enum(ERROR_CODES),
  tool: z.string(),
  reason: z.string(),
});
export type ToolFailure = z.infer<typeof toolFailure>;

export const toolResultSchema = z.discriminatedUnion("ok", [
  z.object({ ok: z.literal(true), output: z.string(), truncated: z.boolean() }),
  z.object({ ok: z.literal(false), error: toolFailure, output: z.string().optional() }),
]);
export type ToolResult = z.infer<typeof toolResultSchema>;

export const pingMethod = {
  method: "ping",
  params: z.object({}).strict(),
  result: z.object({
    ok: z.literal(true),
    pid: z.number().int(),
    agentId: z.string(),
    uptimeMs: z.number(),
    sandbox: z.enum(["bwrap", "none"]),
    protocolVersion: z.number().int(),
  }),
} as const;

/** A tool's hints, in MCP's annotation names (define-tool.ts says what each means). */
export const toolAnnotationsSchema = z.object({
  readOnlyHint: z.boolean(),
  destructiveHint: z.boolean(),
  idempotentHint: z.boolean(),
  openWorldHint: z.boolean(),
});

export const toolInfoSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: toolAnnotationsSchema,
  /** Set when the caller picks the deadline through an argument (milliseconds), within these bounds. */
  deadline: z
    .object({ argument: z.string(), defaultMs: z.number().int().positive(), maxMs: z.number().int().positive() })
    .optional(),
});

export const toolListMethod = {
  method: "tool.list",
  params: z.object({}).strict(),
  result: z.object({ tools: z.array(toolInfoSchema) }),
} as const;

export const toolCallMethod = {
  method: "tool.call",
  params: z
    .object({
      name: z.string().min(1).max(128),
      args: z.record(z.string(), z.unknown()),
      traceId: z.string().max(128).optional(),
      /** The session's working folder; must lie inside the agent's working tree. */
      cwd: z.string().min(1).max(4096).optional(),
    })
    .strict(),
  result: toolResultSchema,
} as const;

export type ToolInfo = z.infer<typeof toolInfoSchema>;

export type MethodDescriptor = { method: string; params: z.ZodType; result: z.ZodType };
export type ParamsOf<M extends MethodDescriptor> = z.input<M["params"]>;
export type ResultOf<M extends MethodDescriptor> = z.output<M["result"]>;

/** The observation a model reads for a failed tool call. */
export function formatFailure(error: ToolFailure): string {
  const reason = error.reason.replace(/\s+/g, " ").trim();
  return `ERROR_CODE=${error.code}; TOOL=${error.tool}; REASON=${reason}`;
}

export function failure(code: ToolErrorCode, tool: string, reason: string, output?: string): ToolResult {
  return output === undefined
    ? { ok: false, error: { code, tool, reason } }
    : { ok: false, error: { code, tool, reason }, output };
}
