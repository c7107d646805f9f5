/**
 * An agent's tools for any MCP client (Claude Desktop, the MCP Inspector, IDE agents),
 * served with the official SDK over the same supervised client the bot uses: the same
 * sandboxed child, the same deadlines, crash handling and audit row per call. The MCP
 * side only translates:
 *
 * - tools/list: the child's tool.list, with each tool's hints as MCP `annotations`;
 * - tools/call: a tool failure is an `isError` result whose text is the one line the
 *   model reads (`ERROR_CODE=...; TOOL=...; REASON=...`) and whose structured content
 *   holds the code, so a client can branch on it; protocol faults stay JSON-RPC errors;
 * - cancellation: the client's notifications/cancelled aborts the call, which cancels it
 *   in the child ($/cancelRequest) and kills a running command.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { formatFailure } from "../protocol.js";
import type { ToolhostClient } from "../client/toolhost-client.js";

export type McpToolServerOptions = {
  client: ToolhostClient;
  /** The session folder every call works in (inside the agent's working tree). */
  cwd: string;
  version: string;
  newTraceId: () => string;
};

export type McpToolServer = {
  server: Server;
  /** Resolves once no request is being answered: a client that ends its input still gets its answers. */
  idle: () => Promise<void>;
};

export function createMcpToolServer(options: McpToolServerOptions): McpToolServer {
  const { client } = options;
  const server = new Server(
    { name: `laoding-${client.agentId}`, version: options.version },
    { capabilities: { tools: {} } },
  );
  let inFlight = 0;
  const idleWaiters: (() => void)[] = [];
  const tracked =
    <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      inFlight += 1;
      try {
        return await handler(...args);
      } finally {
        inFlight -= 1;
        // After the SDK has written the answer: it sends once the handler's promise settles.
        if (inFlight === 0) setImmediate(() => inFlight === 0 && idleWaiters.splice(0).forEach((resolve) => resolve()));
      }
    };

  server.setRequestHandler(
    ListToolsRequestSchema,
    tracked(async () => {
      const tools = await client.listTools();
      return {
        tools: tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          inputSchema: { ...tool.inputSchema, type: "object" as const },
          annotations: tool.annotations,
        })),
      };
    }),
  );

  server.setRequestHandler(
    CallToolRequestSchema,
    tracked(async (request, extra): Promise<CallToolResult> => {
      const result = await client.callTool({
        name: request.params.name,
        args: request.params.arguments ?? {},
        cwd: options.cwd,
        traceId: options.newTraceId(),
        signal: extra.signal,
      });
      if (result.ok)
        return {
          content: [{ type: "text", text: result.output }],
          ...(result.truncated ? { _meta: { truncated: true } } : {}),
        };
      const text = result.output ? `${formatFailure(result.error)}\n${result.output}` : formatFailure(result.error);
      return { isError: true, content: [{ type: "text", text }], structuredContent: { error: result.error } };
    }),
  );

  return {
    server,
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve))),
  };
}
