/**
 * A server's tools listing as the agent's tools: each becomes a `Tool` (define-tool.ts)
 * named `mcp.<server>.<tool>`, with the server's description, its input schema as the
 * JSON Schema the model sees and, compiled, as the check toolhost-server.ts runs before
 * the call, and hints from its annotations. The listing is the server's word, read as
 * untrusted input: an entry that cannot be offered safely is skipped with one warning.
 * Descriptions and the schema the model sees pass through `hide` (a server may quote the
 * secrets it was given there too).
 */
import { z } from "zod";
import { defineTool, type Tool, type ToolHints, type ToolOutput } from "../tools/define-tool.js";
import { createArgsCompiler } from "./args-validator.js";

/** Longest tool name the model's APIs take. */
export const MAX_TOOL_NAME_LENGTH = 64;
/** Longest description kept, in UTF-8 bytes: it is sent to the model on every request. */
export const MAX_DESCRIPTION_BYTES = 1_024;
/** Largest input schema kept, in bytes of JSON: it is sent to the model on every request too. */
export const MAX_SCHEMA_BYTES = 32 * 1_024;

/** The agent's name of a server's tool: `mcp.<server>.<tool>`, the tool part in [A-Za-z0-9_-], 64 characters at most. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp.${server}.${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, MAX_TOOL_NAME_LENGTH);
}

/** Runs one of the server's tools by its own name. */
export type CallServerTool = (
  serverToolName: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<ToolOutput>;

export type ServerTool = {
  tool: Tool;
  serverName: string;
  /** UTF-8 bytes of its description and its schema's JSON: what it adds to every request to the model. */
  bytes: number;
};

/** How a listing's texts are made fit to show: the secrets of `$NAME`s hidden (redact.ts). */
export type Hide = { text: (text: string) => string; json: <T>(value: T) => T };
const SHOW_AS_IS: Hide = { text: (text) => text, json: (value) => value };

const listedTool = z.object({
  name: z.string().min(1).max(1_024),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.unknown(),
  annotations: z.unknown().optional(),
});

const annotations = z.object({
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/** The listing's tools by the agent's name, in the server's order. */
export function serverTools(
  server: string,
  listing: readonly unknown[],
  call: CallServerTool,
  warn: (message: string) => void,
  hide: Hide = SHOW_AS_IS,
): Map<string, ServerTool> {
  const compile = createArgsCompiler();
  const tools = new Map<string, ServerTool>();
  for (const entry of listing) {
    const parsed = listedTool.safeParse(entry);
    if (!parsed.success) {
      warn(`MCP server ${server} listed a tool without a usable name; skipped`);
      continue;
    }
    const listed = parsed.data;
    const name = mcpToolName(server, listed.name);
    const skip = (why: string) => warn(`MCP server ${server}: tool ${JSON.stringify(listed.name)} skipped: ${why}`);
    if (tools.has(name)) {
      skip(`its name is ${name} once made safe, as for ${JSON.stringify(tools.get(name)?.serverName)} (kept)`);
      continue;
    }
    const schema = listed.inputSchema;
    if (
      typeof schema !== "object" ||
      schema === null ||
      Array.isArray(schema) ||
      (schema as { type?: unknown }).type !== "object"
    ) {
      skip('its input schema is not an object schema ({ "type": "object", ... })');
      continue;
    }
    const schemaBytes = jsonBytes(schema);
    if (schemaBytes > MAX_SCHEMA_BYTES) {
      skip(`its input schema takes ${schemaBytes} bytes, more than ${MAX_SCHEMA_BYTES}`);
      continue;
    }
    let inputSchema: z.ZodType;
    try {
      inputSchema = compile(schema as Record<string, unknown>);
    } catch (error) {
      skip((error as Error).message);
      continue;
    }
    const serverName = listed.name;
    // Hidden before it is cut: a cut secret would show its first half.
    const description = capDescription(hide.text(listed.description ?? listed.title ?? ""));
    const tool = defineTool({
      name,
      description,
      inputSchema,
      hints: hintsOf(listed.annotations),
      execute: (args, context) => call(serverName, args as Record<string, unknown>, context.signal),
    });
    // The model sees the server's schema itself, not the check's (which says nothing).
    const jsonSchema = hide.json(schema as Record<string, unknown>);
    const bytes = Buffer.byteLength(description) + (jsonSchema === schema ? schemaBytes : jsonBytes(jsonSchema));
    tools.set(name, { tool: { ...tool, jsonSchema }, serverName, bytes });
  }
  return tools;
}

/**
 * MCP's defaults for what a server does not say: a tool may write, destroy, repeat its
 * effect and reach the world. Destructive and idempotent only mean something for a tool
 * that writes: a read-only tool is neither destructive nor changes anything a second time.
 */
export function hintsOf(raw: unknown): ToolHints {
  const said = annotations.safeParse(raw ?? {});
  const hints = said.success ? said.data : {};
  const readOnly = hints.readOnlyHint ?? false;
  return {
    readOnlyHint: readOnly,
    destructiveHint: readOnly ? false : (hints.destructiveHint ?? true),
    idempotentHint: readOnly ? true : (hints.idempotentHint ?? false),
    openWorldHint: hints.openWorldHint ?? true,
  };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function capDescription(text: string): string {
  if (Buffer.byteLength(text) <= MAX_DESCRIPTION_BYTES) return text;
  const cut = Buffer.from(text)
    .subarray(0, MAX_DESCRIPTION_BYTES - 3)
    .toString("utf8");
  return `${cut.replace(/\uFFFD$/, "")}…`;
}
