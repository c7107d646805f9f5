/**
 * A remote MCP server over Streamable HTTP on 127.0.0.1, with the official SDK's
 * transport on node:http: stands in for `{ "url": "https://mcp.corp.example/mcp" }`.
 * Stateless (a fresh SDK server per request), so any number of clients can use it.
 * With a token, every request must carry `Authorization: Bearer <token>`, else 401.
 *
 * In a test: `await startMcpHttpServer({ token })`. By hand or from another process:
 * `node --import tsx test/fakes/mcp-http-server.ts [--port=N] [--token=T]` prints one
 * JSON line `{"url": ...}` on stdout and serves until killed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export type FakeMcpHttpServer = {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Tool calls answered so far. */
  calls(): number;
  /** Requests refused for a missing or wrong Authorization header. */
  refused(): number;
  close(): Promise<void>;
};

export async function startMcpHttpServer(options: { token?: string; port?: number } = {}): Promise<FakeMcpHttpServer> {
  let calls = 0;
  let refused = 0;
  const mcpServer = () => {
    const server = new Server({ name: "fake-remote-mcp", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        {
          name: "echo",
          description: "Returns the text it is given, from the remote server.",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          annotations: { readOnlyHint: true },
        },
        {
          name: "add",
          description: "Adds two numbers.",
          inputSchema: {
            type: "object",
            properties: { a: { type: "number" }, b: { type: "number" } },
            required: ["a", "b"],
          },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request): CallToolResult => {
      calls += 1;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      if (request.params.name === "echo") return { content: [{ type: "text", text: `remote: ${String(args.text)}` }] };
      if (request.params.name === "add")
        return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
      return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
    });
    return server;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      refused += 1;
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: "missing or wrong bearer token" }));
      return;
    }
    if (request.method !== "POST") {
      // Stateless: no stream of server-initiated messages to open, no session to delete.
      response.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls: () => calls,
    refused: () => refused,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flags = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, "").split("=", 2) as [string, string]));
  const token = flags.get("token");
  const served = await startMcpHttpServer({
    ...(token ? { token } : {}),
    ...(flags.has("port") ? { port: Number(flags.get("port")) } : {}),
  });
  process.stdout.write(`${JSON.stringify({ url: served.url })}\n`);
}
