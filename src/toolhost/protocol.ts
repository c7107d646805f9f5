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
  /** The egress proxy refused the host (not on the agent's network allow list). */
  "NETWORK_REFUSED",
  /** An allowed host could not be reached or answered badly (DNS, connect, TLS, reset). */
  "NETWORK_FAILED",
  /** web.fetch got a body it does not turn into text (a PDF, an image, an archive). */
  "UNSUPPORTED_CONTENT",
  /** An MCP server of the agent is not running (failed to start, crashed, backing off). */
  "MCP_UNAVAILABLE",
  /** An MCP server answered the call with `isError` or a protocol error. */
  "MCP_TOOL_ERROR",
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

/** A server name in agents.json `mcpServers`: its tools are named `mcp.<server>.<tool>`. */
export const MCP_SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/**
 * One MCP server of the agent, as the parent sends it after each start of the child
 * (`mcp.configure`): `$NAME` values already resolved from the bot's environment. It
 * travels on the protocol, never in the start-up message or the child's environment, and
 * the child passes `env`/`headers` only to that server and never logs them.
 */
export const mcpServerConfigSchema = z.discriminatedUnion("transport", [
  z
    .object({
      name: z.string().regex(MCP_SERVER_NAME),
      transport: z.literal("stdio"),
      command: z.string().min(1).max(4096),
      args: z.array(z.string().max(4096)).max(256),
      env: z.record(z.string(), z.string()),
      /** Absolute, inside the agent's working tree; default: the working tree. */
      cwd: z.string().min(1).max(4096).optional(),
    })
    .strict(),
  z
    .object({
      name: z.string().regex(MCP_SERVER_NAME),
      transport: z.literal("http"),
      url: z.string().url().max(4096),
      headers: z.record(z.string(), z.string()),
    })
    .strict(),
]);
export type McpServerConfig = z.infer<typeof mcpServerConfigSchema>;

export const mcpConfigureMethod = {
  method: "mcp.configure",
  params: z
    .object({
      servers: z.array(mcpServerConfigSchema).max(64),
      /** How long a server may take from spawn/connect to its tools list. */
      startTimeoutMs: z.number().int().positive(),
      /** Deadline of one MCP tool call unless the parent's call deadline is shorter. */
      callTimeoutMs: z.number().int().positive(),
      /**
       * Every value a `$NAME` of these servers resolved to (in env, headers, args or the URL):
       * the child hides them in everything it says about the servers (status, errors, logs,
       * tool output), wherever in a text they appear.
       */
      secrets: z.array(z.string().min(1).max(8192)).max(1024).default([]),
    })
    .strict(),
  result: z.object({ ok: z.literal(true) }),
} as const;

export type McpConfigureParams = z.input<(typeof mcpConfigureMethod)["params"]>;

export const MCP_SERVER_STATES = ["idle", "starting", "running", "backoff", "failed", "stopped"] as const;

export const mcpServerStatusSchema = z.object({
  name: z.string(),
  transport: z.enum(["stdio", "http"]),
  state: z.enum(MCP_SERVER_STATES),
  /** Tools it offers (0 until it has started). */
  tools: z.array(z.object({ name: z.string(), description: z.string() })),
  restarts: z.number().int().nonnegative(),
  /** The last failure, one line, secrets never in it. */
  lastError: z.string().optional(),
  /** Epoch ms of the last failure. */
  lastErrorAt: z.number().optional(),
});
export type McpServerStatus = z.infer<typeof mcpServerStatusSchema>;

export const mcpStatusMethod = {
  method: "mcp.status",
  params: z.object({}).strict(),
  result: z.object({ servers: z.array(mcpServerStatusSchema) }),
} as const;

/** Starts one configured server afresh (apart from the running one), lists its tools, stops it. */
export const mcpTestMethod = {
  method: "mcp.test",
  params: z.object({ server: z.string().regex(MCP_SERVER_NAME) }).strict(),
  result: z.object({
    ok: z.boolean(),
    tools: z.array(z.object({ name: z.string(), description: z.string() })),
    error: z.string().optional(),
    durationMs: z.number(),
  }),
} as const;

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
