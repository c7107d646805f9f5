/**
 * A real stdio MCP server, written with the official SDK, standing in for the servers
 * agents run (`npx @modelcontextprotocol/server-github`, a filesystem server, …). Run it
 * with `node --import tsx test/fakes/mcp-stdio-server.ts [flags]`.
 *
 * Tools: `echo` (read-only), `read_file` (reads ANY path: the sandbox, not this server,
 * must stop it), `fetch_url` (through HTTP_PROXY when set), `sleep`, `crash` (exits the
 * process), `add_tool` (registers a tool and sends tools/list_changed), `env` (whether a
 * variable is set, never its value), `calls` (how many tools/call requests it has
 * answered, to prove a call never reached it), `big`, `fail` (an isError result),
 * `structured` (structuredContent only), `image`, `weird name!` (a name to sanitize) and
 * `scalar_input` (a non-object input schema, which a client must skip).
 *
 * Flags: `--garbage` prints a line that is not JSON-RPC on stdout first; `--exit-at-start=N`
 * writes a line to stderr and exits with N; `--slow-start=MS` waits before answering.
 */
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect as tlsConnect } from "node:tls";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

const flags = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, "").split("=", 2);
    return [key ?? "", value ?? "true"] as const;
  }),
);

const exitCode = flags.get("exit-at-start");
if (exitCode !== undefined) {
  process.stderr.write("fake MCP server: refusing to start (asked to by --exit-at-start)\n");
  process.exit(Number(exitCode));
}
if (flags.has("garbage")) process.stdout.write("Welcome to the fake server! This is not JSON-RPC.\n");
const slowStart = Number(flags.get("slow-start") ?? 0);
if (slowStart > 0) await new Promise((resolve) => setTimeout(resolve, slowStart));

const object = (properties: Record<string, object>, required: string[] = []) => ({
  type: "object" as const,
  properties,
  required,
  additionalProperties: false,
});

const tools: Tool[] = [
  {
    name: "echo",
    description: "Returns the text it is given.",
    inputSchema: object({ text: { type: "string", minLength: 1 } }, ["text"]),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: "read_file",
    description: "Reads a file at any path.",
    inputSchema: object({ path: { type: "string" } }, ["path"]),
    annotations: { readOnlyHint: true },
  },
  {
    name: "fetch_url",
    description: "GETs a URL, through HTTP_PROXY when it is set.",
    inputSchema: object({ url: { type: "string" } }, ["url"]),
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  {
    name: "sleep",
    description: "Waits, then answers.",
    inputSchema: object({ ms: { type: "integer", minimum: 0, maximum: 600_000 } }, ["ms"]),
  },
  { name: "crash", description: "Exits the server process.", inputSchema: object({}) },
  {
    name: "add_tool",
    description: "Registers a new echo-like tool and tells the client its list changed.",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  {
    name: "env",
    description: "Says whether an environment variable is set (never its value).",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  { name: "calls", description: "How many tool calls this process has answered.", inputSchema: object({}) },
  {
    name: "big",
    description: "Returns `bytes` bytes of text.",
    inputSchema: object({ bytes: { type: "integer", minimum: 0 } }, ["bytes"]),
  },
  {
    name: "fail",
    description: "Answers with isError.",
    inputSchema: object({ message: { type: "string" } }, ["message"]),
  },
  { name: "structured", description: "Answers with structured content only.", inputSchema: object({}) },
  { name: "image", description: "Answers with an image.", inputSchema: object({}) },
  { name: "weird name!", description: "A name with characters to sanitize.", inputSchema: object({}) },
  {
    name: "scalar_input",
    description: "A tool whose input schema is not an object.",
    inputSchema: { type: "string" } as unknown as Tool["inputSchema"],
  },
];

let answered = 0;
const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: value }],
  ...(isError ? { isError: true } : {}),
});

const server = new Server({ name: "fake-mcp", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
  answered += 1;
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  switch (request.params.name) {
    case "echo":
      return text(String(args.text));
    case "read_file":
      try {
        return text(readFileSync(String(args.path), "utf8"));
      } catch (error) {
        return text(`cannot read ${String(args.path)}: ${(error as Error).message}`, true);
      }
    case "fetch_url":
      try {
        return text(await fetchUrl(String(args.url)));
      } catch (error) {
        return text(`cannot fetch ${String(args.url)}: ${(error as Error).message}`, true);
      }
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
      return text(`slept ${Number(args.ms)} ms`);
    case "crash":
      process.exit(3);
      break;
    case "add_tool": {
      const name = String(args.name);
      tools.push({ name, description: `Added at run time: ${name}.`, inputSchema: object({}) });
      await server.sendToolListChanged();
      return text(`added ${name}`);
    }
    case "env":
      return text(process.env[String(args.name)] === undefined ? "unset" : "set");
    case "calls":
      return text(String(answered - 1));
    case "big":
      return text("x".repeat(Number(args.bytes)));
    case "fail":
      return text(String(args.message), true);
    case "structured":
      return { content: [], structuredContent: { answer: 42, items: ["a", "b"] } };
    case "image":
      return { content: [{ type: "image", data: Buffer.alloc(300).toString("base64"), mimeType: "image/png" }] };
    case "weird name!":
      return text("weird");
    default:
      if (tools.some((tool) => tool.name === request.params.name)) return text(`${request.params.name} ran`);
      return text(`no tool ${request.params.name}`, true);
  }
});

/** GET with the status line and the body's first 4 KiB; plain HTTP in absolute form through HTTP_PROXY, HTTPS through CONNECT. */
function fetchUrl(url: string): Promise<string> {
  const target = new URL(url);
  const proxy = process.env.HTTP_PROXY ?? process.env.http_proxy;
  return new Promise((resolve, reject) => {
    const answer = (response: import("node:http").IncomingMessage) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => void (body.length < 4096 && (body += chunk)));
      response.on("end", () => resolve(`status ${response.statusCode}\n${body.slice(0, 4096)}`));
      response.on("error", reject);
    };
    if (!proxy) {
      httpRequest(target, answer).on("error", reject).end();
      return;
    }
    const via = new URL(proxy);
    if (target.protocol === "http:") {
      httpRequest({ host: via.hostname, port: via.port, path: target.href, headers: { host: target.host } }, answer)
        .on("error", reject)
        .end();
      return;
    }
    const port = target.port || "443";
    httpRequest({ host: via.hostname, port: via.port, method: "CONNECT", path: `${target.hostname}:${port}` })
      .on("connect", (response, socket) => {
        if (response.statusCode !== 200) {
          socket.destroy();
          return resolve(`status ${response.statusCode}\nthe proxy refused CONNECT`);
        }
        const tls = tlsConnect({ socket, servername: target.hostname });
        httpRequest(
          { createConnection: () => tls, path: target.pathname + target.search, headers: { host: target.host } },
          answer,
        )
          .on("error", reject)
          .end();
      })
      .on("error", reject)
      .end();
  });
}

await server.connect(new StdioServerTransport());
