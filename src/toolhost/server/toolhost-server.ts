/**
 * The child side of the protocol: validates every request against the shared
 * descriptors, runs tools, and turns every tool failure into an `ok: false` result.
 * Only malformed requests become JSON-RPC errors.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { ResponseError, type CancellationToken, type MessageReader, type MessageWriter } from "vscode-jsonrpc/node";
import { z } from "zod";
import type { PathSandbox } from "../sandbox/path-sandbox.js";
import { isWithin } from "../sandbox/path-sandbox.js";
import {
  PROTOCOL_VERSION,
  RPC_ERRORS,
  failure,
  pingMethod,
  toolCallMethod,
  toolListMethod,
  type MethodDescriptor,
  type ResultOf,
  type ToolInfo,
  type ToolResult,
} from "../protocol.js";
import type { ShellRunner } from "../shell/shell-runner.js";
import { ToolError } from "../tool-error.js";
import type { Tool, ToolLimits } from "../tools/define-tool.js";
import { errnoFailure } from "../tools/file-access.js";
import { boundReason } from "../tools/truncate-output.js";
import { createRpcEndpoint, type RpcEndpoint } from "./rpc-endpoint.js";

export type ToolhostServerOptions = {
  reader: MessageReader;
  writer: MessageWriter;
  agentId: string;
  tools: Tool[];
  sandbox: PathSandbox;
  /** Real path of the agent's working tree: every session cwd lies inside it. */
  workTree: string;
  limits: ToolLimits;
  shell: ShellRunner;
  logger: Logger;
  /** Prepares a session folder on first use (again when it was just created): the `团队经验` link, git exclude, library index (session-setup.ts). */
  setupSession?: (folder: string, created: boolean) => void;
  clock?: { now(): number };
};

export type ToolhostServer = {
  connection: RpcEndpoint;
  /** Resolves once no request is being handled (or at once when none is). */
  idle(): Promise<void>;
};

export function serveToolhost(options: ToolhostServerOptions): ToolhostServer {
  const clock = options.clock ?? { now: () => Date.now() };
  const startedAt = clock.now();
  const tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  const connection = createRpcEndpoint(options.reader, options.writer, options.logger);

  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const track = <T>(handler: (params: unknown, token: CancellationToken) => T | Promise<T>) => async (params: unknown, token: CancellationToken): Promise<T> => {
    inFlight += 1;
    try {
      return await handler(params, token);
    } finally {
      inFlight -= 1;
      if (inFlight === 0) for (const resolve of idleWaiters.splice(0)) resolve();
    }
  };

  /** One handler per method: params validated before, the result checked after, against the shared descriptor. */
  const handle = <M extends MethodDescriptor>(descriptor: M, run: (params: z.output<M["params"]>, token: CancellationToken) => ResultOf<M> | Promise<ResultOf<M>>) =>
    connection.onRequest(descriptor.method, track(async (params: unknown, token: CancellationToken) => checkedResult(descriptor, await run(validateParams(descriptor, params), token))));

  handle(pingMethod, () => ({
    ok: true as const,
    pid: process.pid,
    agentId: options.agentId,
    uptimeMs: clock.now() - startedAt,
    sandbox: options.shell.mode,
    protocolVersion: PROTOCOL_VERSION,
  }));

  const toolList = options.tools.map((tool) => toolInfo(tool, options.limits));
  handle(toolListMethod, () => ({ tools: toolList }));

  handle(toolCallMethod, async (call, token): Promise<ToolResult> => {
    const tool = tools.get(call.name);
    if (!tool) return failure("UNKNOWN_TOOL", call.name, `no tool named ${call.name}; available: ${[...tools.keys()].join(", ")}`);
    const controller = new AbortController();
    const cancellation = token.onCancellationRequested(() => controller.abort());
    const started = clock.now();
    const log = () => options.logger.child({ traceId: call.traceId, tool: call.name });
    try {
      const args = tool.inputSchema.safeParse(call.args);
      if (!args.success) return failure("INVALID_ARGS", call.name, boundReason(describeIssues(args.error)));
      const cwd = sessionFolder(call.cwd, options);
      const output = await tool.execute(args.data, {
        cwd,
        sandbox: options.sandbox,
        limits: options.limits,
        signal: controller.signal,
        shell: options.shell,
        ...(call.traceId ? { traceId: call.traceId } : {}),
      });
      if (options.logger.isLevelEnabled("debug")) log().debug({ durationMs: clock.now() - started, truncated: output.truncated }, "tool call done");
      return { ok: true, output: output.output, truncated: output.truncated };
    } catch (error) {
      if (error instanceof ToolError) {
        if (options.logger.isLevelEnabled("debug")) log().debug({ code: error.code, durationMs: clock.now() - started }, "tool call failed");
        return failure(error.code, call.name, boundReason(error.message), error.output);
      }
      // An fs error that escaped a tool: its code says enough, its message would name real paths.
      const mapped = errnoFailure(error, "the path");
      if (mapped) return failure(mapped.code, call.name, mapped.message);
      log().error({ err: error }, "tool crashed");
      return failure("INTERNAL", call.name, "the tool failed unexpectedly; the toolhost log has the details");
    } finally {
      cancellation.dispose();
    }
  });

  connection.listen();
  return {
    connection,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
  };
}

function validateParams<M extends MethodDescriptor>(descriptor: M, params: unknown): z.output<M["params"]> {
  const parsed = descriptor.params.safeParse(params ?? {});
  if (!parsed.success) {
    throw new ResponseError(RPC_ERRORS.invalidParams, `invalid params for ${descriptor.method}: ${describeIssues(parsed.error)}`);
  }
  return parsed.data as z.output<M["params"]>;
}

/** A result that breaks the contract is this child's bug: said as a protocol fault, never sent as it is. */
function checkedResult<M extends MethodDescriptor>(descriptor: M, result: ResultOf<M>): ResultOf<M> {
  const parsed = descriptor.result.safeParse(result);
  if (!parsed.success) throw new ResponseError(RPC_ERRORS.internalError, `the toolhost built an invalid result for ${descriptor.method}: ${describeIssues(parsed.error)}`);
  return result;
}

/** What tool.list says of a tool: its declaration, with its deadline bounds taken from this agent's limits. */
function toolInfo(tool: Tool, limits: ToolLimits): ToolInfo {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.jsonSchema,
    annotations: tool.hints,
    ...(tool.deadline ? { deadline: { argument: tool.deadline.argument, defaultMs: tool.deadline.defaultMs(limits), maxMs: tool.deadline.maxMs(limits) } } : {}),
  };
}

/** The session folder: inside the working tree, created on first use; default the tree itself. */
function sessionFolder(requested: string | undefined, options: ToolhostServerOptions): string {
  if (requested === undefined) return options.workTree;
  if (requested.includes("\0")) throw new ToolError("PATH_NOT_ALLOWED", "cwd contains a NUL byte");
  const resolved = options.sandbox.resolve(requested, options.workTree, "write");
  if (!isWithin(options.workTree, resolved.realPath)) {
    throw new ToolError("PATH_NOT_ALLOWED", `cwd ${requested} is outside the agent's working tree`);
  }
  // An existing folder's path is already real; a new one is made, then resolved again.
  let folder = resolved.realPath;
  if (!resolved.exists) {
    mkdirSync(resolved.realPath, { recursive: true });
    folder = realpathSync.native(resolved.realPath);
    // A parent swapped for a link between the check and mkdir would have put it elsewhere.
    if (!isWithin(options.workTree, folder)) throw new ToolError("PATH_NOT_ALLOWED", `cwd ${requested} is outside the agent's working tree`);
  }
  if (options.setupSession && dirname(folder) === options.workTree) options.setupSession(folder, !resolved.exists);
  return folder;
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "arguments"}: ${issue.message}`)
    .join("; ");
}
