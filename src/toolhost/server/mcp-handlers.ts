/**
 * The `mcp.*` methods of the child: the parent configures the agent's MCP servers after
 * each start of the child (`mcp.configure`), and asks how they are (`mcp.status`, for
 * `laoding mcp list` and the admin page) or has one tried afresh (`mcp.test`).
 *
 * A child made without MCP servers (a maintenance child) has none: its status is an
 * empty list, a test finds no such server, and a configuration naming servers is refused
 * as invalid params, so a parent that expects them learns it at once.
 */
import type { CancellationToken } from "vscode-jsonrpc/node";
import { ResponseError } from "vscode-jsonrpc/node";
import type { z } from "zod";
import type { MaybePromise } from "../maybe-async.js";
import type { McpServers } from "../mcp-servers/mcp-servers.js";
import {
  RPC_ERRORS,
  mcpConfigureMethod,
  mcpStatusMethod,
  mcpTestMethod,
  type MethodDescriptor,
  type ResultOf,
} from "../protocol.js";

/** How toolhost-server.ts registers a method: params validated before, the result checked after. */
export type RegisterMethod = <M extends MethodDescriptor>(
  descriptor: M,
  run: (params: z.output<M["params"]>, token: CancellationToken) => MaybePromise<ResultOf<M>>,
) => void;

export function handleMcpMethods(handle: RegisterMethod, mcp: McpServers | undefined): void {
  handle(mcpConfigureMethod, (params) => {
    if (!mcp) {
      if (params.servers.length === 0) return { ok: true as const };
      throw new ResponseError(RPC_ERRORS.invalidParams, "this toolhost child runs no MCP servers");
    }
    mcp.configure(params);
    return { ok: true as const };
  });
  handle(mcpStatusMethod, () => ({ servers: mcp ? mcp.status() : [] }));
  handle(mcpTestMethod, (params) =>
    mcp
      ? mcp.test(params.server)
      : { ok: false, tools: [], error: `no MCP server named ${params.server} is configured`, durationMs: 0 },
  );
}
