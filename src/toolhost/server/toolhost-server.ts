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
import type { McpServers } from "../mcp-servers/mcp-servers.js";
import type { ShellRunner } from "../shell/shell-runner.js";
import { ToolError } from "../tool-error.js";
import type { Tool, ToolLimits, ToolOutput } from "../tools/define-tool.js";
import { andFinally, andThen, mapMaybe, type MaybePromise } from "../maybe-async.js";
import { errnoFailure } from "../tools/file-access.js";
import { boundReason } from "../tools/truncate-output.js";
import { describeIssues } from "../../validation/describe-issues.js";
import { handleMcpMethods, type RegisterMethod } from "./mcp-handlers.js";
import { createRpcEndpoint, type RpcEndpoint } from "./rpc-endpoint.js";

/** How long a session folder's resolution serves the path tools' calls that follow. */
const FOLDER_REUSE_MS = 1_000;
/** Session folders remembered at once (a child serves one agent's chats). */
const FOLDERS_KEPT = 64;

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
  /** Prepares a session folder each time it is resolved afresh: the `团队经验` link, git exclude, library index (session-setup.ts). */
  setupSession?: (folder: string) => void;
  clock?: { now(): number };
  /**
   * The agent's MCP servers: their tools follow the built-in ones in tool.list, calls to
   * `mcp.*` names go to them, and the mcp.* methods reach them (mcp-handlers.ts).
   */
  mcp?: McpServers;
};

export type ToolhostServer = {
  connection: RpcEndpoint;
  /** Resolves once no request is being handled (or at once when none is). */
  idle(): Promise<void>;
  /** Tool calls run so far (pings and lists do not count), and requests being handled now. */
  activity(): { toolCalls: number; inFlight: number };
};

export function serveToolhost(options: ToolhostServerOptions): ToolhostServer {
  const clock = options.clock ?? { now: () => Date.now() };
  const startedAt = clock.now();
  const tools = new Map(options.tools.map((tool) => [tool.name, tool]));
  const connection = createRpcEndpoint(options.reader, options.writer, options.logger);

  let inFlight = 0;
  let toolCalls = 0;
  const idleWaiters: (() => void)[] = [];
  const track = <T>(work: () => MaybePromise<T>): MaybePromise<T> => {
    inFlight += 1;
    return andFinally(work, () => {
      inFlight -= 1;
      if (inFlight === 0) for (const resolve of idleWaiters.splice(0)) resolve();
    });
  };

  /**
   * One handler per method: params validated before, the result checked after, against the
   * shared descriptor. Synchronous all the way for a synchronous tool, so its answer leaves
   * before the next request of the chunk is started (rpc-endpoint.ts).
   */
  const handle: RegisterMethod = <M extends MethodDescriptor>(
    descriptor: M,
    run: (params: z.output<M["params"]>, token: CancellationToken) => MaybePromise<ResultOf<M>>,
  ) =>
    connection.onRequest(descriptor.method, (params, token) =>
      track(() =>
        mapMaybe(run(validateParams(descriptor, params), token), (result) => checkedResult(descriptor, result)),
      ),
    );

  handle(pingMethod, () => ({
    ok: true as const,
    pid: process.pid,
    agentId: options.agentId,
    uptimeMs: clock.now() - startedAt,
    sandbox: options.shell.mode,
    protocolVersion: PROTOCOL_VERSION,
  }));

  const toolList = options.tools.map((tool) => toolInfo(tool, options.limits));
  const { mcp } = options;
  // MCP servers start on the first list (lazily) and their tools can change between lists.
  handle(toolListMethod, () =>
    mcp
      ? mcp.tools().then(
          (more) => ({ tools: [...toolList, ...more.map((tool) => toolInfo(tool, options.limits))] }),
          // The agent's own tools never depend on its MCP servers.
          (error: unknown) => {
            options.logger.error({ err: error }, "the MCP servers' tools could not be listed; built-in tools only");
            return { tools: toolList };
          },
        )
      : { tools: toolList },
  );
  handleMcpMethods(handle, mcp);

  // A chat's calls come in bursts, all naming the chat's folder: its resolution (three
  // system calls) serves the calls of the next moment. Safe for path tools, which check
  // each path after realpath on its own; a tool that starts a process there (runsInFolder)
  // always has it resolved afresh.
  const folders = new Map<string, { folder: string; until: number }>();
  const folderFor = (requested: string | undefined, tool: Tool): string => {
    if (requested === undefined) return options.workTree;
    // Monotonic: a step of the wall clock must not stretch an entry's second.
    const now = performance.now();
    const known = folders.get(requested);
    if (known && known.until > now && !tool.runsInFolder) return known.folder;
    const folder = sessionFolder(requested, options);
    folders.delete(requested);
    if (folders.size >= FOLDERS_KEPT) folders.delete(folders.keys().next().value as string);
    folders.set(requested, { folder, until: now + FOLDER_REUSE_MS });
    return folder;
  };

  handle(toolCallMethod, (call, token): MaybePromise<ToolResult> => {
    const tool = tools.get(call.name);
    if (tool) return runTool(tool, call, token);
    // An MCP server's tool: found once its server has started (the first call may start it).
    if (mcp && call.name.startsWith("mcp."))
      return andThen(
        () => mcp.find(call.name),
        (found) =>
          found
            ? runTool(found, call, token)
            : failure(
                "UNKNOWN_TOOL",
                call.name,
                boundReason(`no tool named ${call.name}; the MCP servers' tools: ${mcp.names().join(", ") || "none"}`),
              ),
        (error) => {
          options.logger.error({ err: error, tool: call.name }, "finding an MCP tool failed");
          return failure("INTERNAL", call.name, "the toolhost failed unexpectedly; its log has the details");
        },
      );
    return failure("UNKNOWN_TOOL", call.name, `no tool named ${call.name}; available: ${[...tools.keys()].join(", ")}`);
  });

  const runTool = (
    tool: Tool,
    call: z.output<typeof toolCallMethod.params>,
    token: CancellationToken,
  ): MaybePromise<ToolResult> => {
    const args = tool.inputSchema.safeParse(call.args);
    if (!args.success)
      return failure("INVALID_ARGS", call.name, boundReason(describeIssues(args.error, { root: "arguments" })));
    // The abort signal is made only for a tool that asks for it: most calls never look.
    let controller: AbortController | undefined;
    let cancellation: { dispose(): void } | undefined;
    const signal = (): AbortSignal => {
      if (!controller) {
        const made = new AbortController();
        if (token.isCancellationRequested) made.abort();
        else cancellation = token.onCancellationRequested(() => made.abort());
        controller = made;
      }
      return controller.signal;
    };
    const started = clock.now();
    const log = () => options.logger.child({ traceId: call.traceId, tool: call.name });
    const succeeded = (output: ToolOutput): ToolResult => {
      if (options.logger.isLevelEnabled("debug"))
        log().debug({ durationMs: clock.now() - started, truncated: output.truncated }, "tool call done");
      return { ok: true, output: output.output, truncated: output.truncated };
    };
    const failed = (error: unknown): ToolResult => {
      if (error instanceof ToolError) {
        if (options.logger.isLevelEnabled("debug"))
          log().debug({ code: error.code, durationMs: clock.now() - started }, "tool call failed");
        return failure(error.code, call.name, boundReason(error.message), error.output);
      }
      // An fs error that escaped a tool: its code says enough, its message would name real paths.
      const mapped = errnoFailure(error, "the path");
      if (mapped) return failure(mapped.code, call.name, mapped.message);
      log().error({ err: error }, "tool crashed");
      return failure("INTERNAL", call.name, "the tool failed unexpectedly; the toolhost log has the details");
    };
    const execute = () =>
      tool.execute(args.data, {
        cwd: folderFor(call.cwd, tool),
        sandbox: options.sandbox,
        limits: options.limits,
        get signal() {
          return signal();
        },
        shell: options.shell,
        ...(call.traceId ? { traceId: call.traceId } : {}),
      });
    return andFinally(
      () => andThen(execute, succeeded, failed),
      () => {
        toolCalls += 1;
        cancellation?.dispose();
      },
    );
  };

  connection.listen();
  return {
    connection,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
    activity: () => ({ toolCalls, inFlight }),
  };
}

function validateParams<M extends MethodDescriptor>(descriptor: M, params: unknown): z.output<M["params"]> {
  const parsed = descriptor.params.safeParse(params ?? {});
  if (!parsed.success) {
    throw new ResponseError(
      RPC_ERRORS.invalidParams,
      `invalid params for ${descriptor.method}: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data as z.output<M["params"]>;
}

/** A result that breaks the contract is this child's bug: said as a protocol fault, never sent as it is. */
function checkedResult<M extends MethodDescriptor>(descriptor: M, result: ResultOf<M>): ResultOf<M> {
  const parsed = descriptor.result.safeParse(result);
  if (!parsed.success)
    throw new ResponseError(
      RPC_ERRORS.internalError,
      `the toolhost built an invalid result for ${descriptor.method}: ${describeIssues(parsed.error)}`,
    );
  return result;
}

/** What tool.list says of a tool: its declaration, with its deadline bounds taken from this agent's limits. */
function toolInfo(tool: Tool, limits: ToolLimits): ToolInfo {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.jsonSchema,
    annotations: tool.hints,
    ...(tool.deadline
      ? {
          deadline: {
            argument: tool.deadline.argument,
            defaultMs: tool.deadline.defaultMs(limits),
            maxMs: tool.deadline.maxMs(limits),
          },
        }
      : {}),
  };
}

/** The session folder a call names: inside the working tree, created on first use (folderFor keeps the tree itself as the default). */
function sessionFolder(requested: string, options: ToolhostServerOptions): string {
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
    if (!isWithin(options.workTree, folder))
      throw new ToolError("PATH_NOT_ALLOWED", `cwd ${requested} is outside the agent's working tree`);
  }
  if (options.setupSession && dirname(folder) === options.workTree) options.setupSession(folder);
  return folder;
}
