/**
 * Tools are declared once: name, description, zod input schema, hints and `execute`. The
 * JSON Schema in `tool.list` is derived from the zod schema, never written twice, and the
 * hints (MCP's annotation names) travel with it: the parent decides retries and deadlines
 * from them, and MCP clients see them as they are.
 *
 * Every answer is bounded here, once for all tools: the output (of a success or of a
 * failure) to `limits.outputMaxBytes` and the error reason to REASON_MAX_BYTES, both
 * measured after JSON encoding, so no tool can produce a frame the parent refuses.
 */
import { z } from "zod";
import type { PathSandbox } from "../sandbox/path-sandbox.js";
import type { ShellRunner } from "../shell/shell-runner.js";
import { andThen, type MaybePromise } from "../maybe-async.js";
import { ToolError } from "../tool-error.js";
import { boundReason, headTail } from "./truncate-output.js";

export type ToolLimits = {
  /** Largest output returned to the model, in bytes after JSON encoding (head + tail beyond it). */
  outputMaxBytes: number;
  /** Largest file file.write/file.edit will write or edit. */
  writeMaxBytes: number;
  listMaxEntries: number;
  grepMaxResults: number;
  grepMaxFileBytes: number;
  globMaxResults: number;
  shellTimeoutMs: number;
  shellMaxTimeoutMs: number;
};

/** The limits a variable sets: their defaults live once, in the variables table (TOOL_OUTPUT_MAX_BYTES, SHELL_TIMEOUT_MS, SHELL_MAX_TIMEOUT_MS). */
export type ConfiguredToolLimit = "outputMaxBytes" | "shellTimeoutMs" | "shellMaxTimeoutMs";

/** The limits no variable sets; the parent adds the configured ones (toolhost-launch.ts). */
export const DEFAULT_TOOL_LIMITS: Omit<ToolLimits, ConfiguredToolLimit> = {
  writeMaxBytes: 8 * 1024 * 1024,
  listMaxEntries: 1_000,
  grepMaxResults: 100,
  grepMaxFileBytes: 4 * 1024 * 1024,
  globMaxResults: 1_000,
};

export type ToolContext = {
  /**
   * Real path of the session's working folder, checked inside the agent's working tree
   * when it was resolved: for a `runsInFolder` tool on this call, for others up to a
   * second ago (they check every path they are given on their own).
   */
  cwd: string;
  sandbox: PathSandbox;
  limits: ToolLimits;
  signal: AbortSignal;
  shell: ShellRunner;
  traceId?: string;
};

export type ToolOutput = { output: string; truncated: boolean };

/**
 * What a call may do, in MCP's annotation names. `readOnlyHint`: changes nothing, so the
 * parent may run it again after a crash; `destructiveHint`: may overwrite or delete;
 * `idempotentHint`: a second identical call changes nothing more; `openWorldHint`: reaches
 * beyond the agent's folders (the network).
 */
export type ToolHints = {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

/** Hints of a tool that only reads the agent's folders. */
export const READS_ONLY: ToolHints = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/**
 * A tool whose deadline the caller chooses through one argument (milliseconds), within
 * the agent's limits; every other tool has the parent's call deadline.
 */
export type DeadlineSpec = {
  argument: string;
  defaultMs(limits: ToolLimits): number;
  maxMs(limits: ToolLimits): number;
};

export type Tool = {
  name: string;
  description: string;
  inputSchema: z.ZodType;
  jsonSchema: Record<string, unknown>;
  hints: ToolHints;
  deadline?: DeadlineSpec;
  /**
   * The tool starts a process in the working folder, so the folder is resolved and checked
   * afresh for each of its calls. Every other tool checks each path it is given on its own,
   * so a folder resolved a moment earlier serves it (toolhost-server.ts).
   */
  runsInFolder?: true;
  /** A tool that needs no waiting returns its output directly; it is answered in the turn it arrived. */
  execute(args: unknown, context: ToolContext): MaybePromise<ToolOutput>;
};

export function defineTool<S extends z.ZodType>(spec: {
  name: string;
  description: string;
  inputSchema: S;
  hints: ToolHints;
  deadline?: DeadlineSpec;
  runsInFolder?: true;
  execute(args: z.output<S>, context: ToolContext): MaybePromise<ToolOutput>;
}): Tool {
  const jsonSchema = z.toJSONSchema(spec.inputSchema, { io: "input" }) as Record<string, unknown>;
  delete jsonSchema.$schema;
  return {
    ...spec,
    jsonSchema,
    execute: (args, context) => {
      const maxBytes = context.limits.outputMaxBytes;
      return andThen(
        () => spec.execute(args as z.output<S>, context),
        (result) => {
          const capped = headTail(result.output, maxBytes);
          return { output: capped.text, truncated: result.truncated || capped.truncated };
        },
        (error) => {
          if (!(error instanceof ToolError)) throw error;
          const output = error.output === undefined ? undefined : headTail(error.output, maxBytes).text;
          throw new ToolError(error.code, boundReason(error.message), output);
        },
      );
    },
  };
}
