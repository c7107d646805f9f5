/**
 * What an agent may reach beyond its folders, as agents.json says it: `network` (false,
 * true, or an allow list the egress proxy applies) and `mcpServers` (the shape Claude
 * Desktop's users already write). Values may name the bot's environment as `$NAME` (or
 * `${NAME}`); they are resolved once at start, passed only to that server, and added to
 * the log redactor (docs/mcp.md, docs/network.md).
 */
import { z } from "zod";
import { parseAllowEntry } from "../egress/allow-list.js";
import { MCP_SERVER_NAME, type McpServerConfig } from "../toolhost/protocol.js";

/** At most this many entries in one allow list, servers per agent. */
const ALLOW_ENTRIES_MAX = 256;
const SERVERS_MAX = 16;

const allowListSchema = z
  .object({
    allow: z
      .array(z.string().min(1).max(300))
      .min(1, { message: 'lists no hosts; use "network": false for none' })
      .max(ALLOW_ENTRIES_MAX),
  })
  .strict()
  .superRefine((value, context) => {
    value.allow.forEach((entry, index) => {
      try {
        parseAllowEntry(entry);
      } catch (error) {
        context.addIssue({ code: "custom", path: ["allow", index], message: (error as Error).message });
      }
    });
  });

export const networkSchema = z.union([z.boolean(), allowListSchema]).default(false);

/** `false` none, `true` the host's network, `{ allow }` only through the egress proxy. */
export type NetworkSetting = z.output<typeof networkSchema>;

export function allowListOf(network: NetworkSetting): string[] | undefined {
  return typeof network === "object" ? network.allow : undefined;
}

/** `$NAME` or `${NAME}`; `$$` is a literal `$`. */
const REFERENCE = /\$\$|\$\{([A-Z_][A-Z0-9_]*)\}|\$([A-Z_][A-Z0-9_]*)/g;

const envKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { message: "must be an environment variable name" });
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, { message: "must be an HTTP header name" });
const value = z.string().max(8192);

/**
 * A secret never goes in a server's arguments: the agent's own commands can read every
 * process's command line in its jail (/proc), while a process's environment is its own.
 */
const argument = value.refine((text) => ![...text.matchAll(REFERENCE)].some((match) => match[1] ?? match[2]), {
  message:
    "may not name a variable ($NAME): a server's arguments are visible to the agent's commands; pass the value in env instead (and read it there)",
});

const stdioServerSchema = z
  .object({
    command: z.string().min(1).max(4096),
    args: z.array(argument).max(256).default([]),
    env: z.record(envKey, value).default({}),
    /** A folder inside the agent's working tree (relative); default the working tree. */
    cwd: z
      .string()
      .min(1)
      .max(4096)
      .refine((path) => !path.startsWith("/") && !path.includes("\0") && !path.split("/").includes(".."), {
        message: "must be a folder inside the agent's working tree (a relative path without ..)",
      })
      .optional(),
  })
  .strict();

const httpServerSchema = z
  .object({
    url: z
      .string()
      .max(4096)
      .refine((text) => /^https?:\/\//i.test(text) && URL.canParse(text.replace(/\$\{?[A-Z][A-Z0-9_]*\}?/g, "x")), {
        message: "must be an http:// or https:// URL (a Streamable HTTP MCP endpoint)",
      }),
    headers: z.record(headerName, value).default({}),
  })
  .strict();

export type StdioServerSetting = z.output<typeof stdioServerSchema>;
export type HttpServerSetting = z.output<typeof httpServerSchema>;
export type McpServerSetting = StdioServerSetting | HttpServerSetting;

/** A server is remote when it has a `url`, else it is a command: each is checked by its own shape, so errors name its own keys. */
export const mcpServersSchema = z
  .record(z.string(), z.unknown())
  .default({})
  .transform((servers, context) => {
    if (Object.keys(servers).length > SERVERS_MAX) {
      context.addIssue({ code: "custom", message: `at most ${SERVERS_MAX} servers per agent` });
      return z.NEVER;
    }
    const checked: Record<string, McpServerSetting> = {};
    for (const [name, server] of Object.entries(servers)) {
      if (!MCP_SERVER_NAME.test(name)) {
        context.addIssue({
          code: "custom",
          path: [name],
          message: `a server name must match ^[a-z0-9][a-z0-9_-]{0,31}$ (its tools are named mcp.<server>.<tool>)`,
        });
        continue;
      }
      const remote = typeof server === "object" && server !== null && "url" in server;
      const parsed = (remote ? httpServerSchema : stdioServerSchema).safeParse(server);
      if (parsed.success) {
        checked[name] = parsed.data;
        continue;
      }
      for (const issue of parsed.error.issues)
        context.addIssue({
          code: "custom",
          path: [name, ...issue.path.map((key) => (typeof key === "symbol" ? String(key) : key))],
          message:
            issue.code === "unrecognized_keys"
              ? `unknown ${issue.keys.length === 1 ? "key" : "keys"} ${issue.keys.map((key) => `"${key}"`).join(", ")}; a server has ${remote ? '"url" and "headers"' : '"command", "args", "env" and "cwd"'}`
              : issue.code === "invalid_type" && issue.path.length === 0
                ? 'must be { "command": …, "args": […], "env": {…} } or { "url": …, "headers": {…} }'
                : issue.message,
        });
    }
    return checked;
  });

/** The `$NAME`s a server's values refer to (`$$` is a literal `$`). */
export function referencedNames(server: McpServerSetting): string[] {
  const names = new Set<string>();
  for (const text of settingTexts(server))
    for (const match of text.matchAll(REFERENCE)) {
      const name = match[1] ?? match[2];
      if (name) names.add(name);
    }
  return [...names];
}

function settingTexts(server: McpServerSetting): string[] {
  return "url" in server
    ? [server.url, ...Object.values(server.headers)]
    : [...server.args, ...Object.values(server.env)];
}

export class UnsetReferenceError extends Error {
  override readonly name = "UnsetReferenceError";
  constructor(
    readonly variable: string,
    readonly where: string,
  ) {
    super(`${where} refers to $${variable}, which is not set in the environment or any env file`);
  }
}

/**
 * The server as the child receives it: every `$NAME` replaced by its value (`lookup`:
 * the environment, then the env files), `cwd` made absolute inside the working tree.
 * Throws UnsetReferenceError naming the key and the variable.
 */
export function resolveMcpServer(
  name: string,
  server: McpServerSetting,
  lookup: (variable: string) => string | undefined,
  workTree: string,
): { config: McpServerConfig; secrets: string[] } {
  const secrets: string[] = [];
  const fill = (text: string, where: string) =>
    text.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => {
      const variable = braced ?? bare;
      if (!variable) return "$";
      const found = lookup(variable);
      if (found === undefined || found === "") throw new UnsetReferenceError(variable, where);
      secrets.push(found);
      return found;
    });
  const at = `mcpServers.${name}`;
  if ("url" in server) {
    const headers = Object.fromEntries(
      Object.entries(server.headers).map(([key, text]) => [key, fill(text, `${at}.headers.${key}`)]),
    );
    return { config: { name, transport: "http", url: fill(server.url, `${at}.url`), headers }, secrets };
  }
  const args = server.args.map((arg, index) => fill(arg, `${at}.args[${index}]`));
  const env = Object.fromEntries(
    Object.entries(server.env).map(([key, text]) => [key, fill(text, `${at}.env.${key}`)]),
  );
  const cwd = server.cwd === undefined ? undefined : `${workTree}/${server.cwd.replace(/\/+$/, "")}`;
  return {
    config: { name, transport: "stdio", command: server.command, args, env, ...(cwd ? { cwd } : {}) },
    secrets,
  };
}
