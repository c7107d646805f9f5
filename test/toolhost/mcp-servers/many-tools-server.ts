/**
 * A remote MCP server (the SDK's Streamable HTTP transport on node:http, 127.0.0.1) that
 * lists as many tools as a test asks for, each with an input schema of about the size it
 * asks for: the listings real servers can send (up to 1,000 tools of 32 KiB each), in
 * process, without a start of its own to wait for. Stateless, like test/fakes/mcp-http-server.ts.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";

export type ManyToolsServer = { url: string; close(): Promise<void> };

/** `tools` tools named `t0`, `t1`, …, each schema's JSON about `schemaBytes` bytes (at least ~60), described as `Tool N.`. */
export async function startManyToolsServer(options: { tools: number; schemaBytes?: number }): Promise<ManyToolsServer> {
  const padding = "x".repeat(Math.max(0, (options.schemaBytes ?? 0) - 75));
  const tools: Tool[] = Array.from({ length: options.tools }, (_, index) => ({
    name: `t${index}`,
    description: `Tool ${index}.`,
    inputSchema: { type: "object", properties: { p: { type: "string", description: padding } } },
  }));
  const http = createServer((request, response) => {
    // Stateless: no stream of server-initiated messages to open, no session to delete.
    if (request.method !== "POST") return void response.writeHead(405, { allow: "POST" }).end();
    const server = new Server({ name: "many-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, (call) => ({
      content: [{ type: "text", text: `${call.params.name} ran` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
