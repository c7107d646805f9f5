/**
 * The narrow start-up message a toolhost child receives instead of the bot's
 * configuration: its agent, its roots, its limits and its sandbox. It travels in one
 * environment variable (the child's environment is otherwise cleared) and holds no
 * secret, so the child never loads an env file, never sees an API key or a bot token.
 * Both sides validate it with this one schema.
 */
import { z } from "zod";
import { describeIssues } from "../../validation/describe-issues.js";

/** The environment variable that carries the message (JSON). */
export const STARTUP_VARIABLE = "LAODING_TOOLHOST_STARTUP";

const absolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((path) => path.startsWith("/") && !path.includes("\0"), {
    message: "must be an absolute path without NUL bytes",
  });
const positiveInt = z.number().int().positive();

export const toolhostStartupSchema = z
  .object({
    version: z.literal(1),
    agentId: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
    roots: z
      .array(z.object({ path: absolutePath, writable: z.boolean(), label: z.string().min(1).max(64) }).strict())
      .min(1),
    workTree: absolutePath,
    /**
     * A link every session folder gets (`团队经验` -> the agent's experience library).
     * Without a target, a link of that name is removed (the library was switched off).
     */
    sessionLink: z
      .object({ name: z.string().min(1).max(255), target: absolutePath.optional() })
      .strict()
      .optional(),
    /** The agent's experience library, when enabled: its tools are served and writes into it refresh its index. */
    library: z
      .object({ dir: absolutePath, locale: z.enum(["zh", "en"]) })
      .strict()
      .optional(),
    /** An operator's maintenance child (admin API, `laoding share`): also serves the operator.* tools. Never set for chats. */
    operatorTools: z.boolean().optional(),
    allowedCommands: z.array(z.string().min(1).max(128)),
    limits: z
      .object({
        outputMaxBytes: positiveInt,
        writeMaxBytes: positiveInt,
        listMaxEntries: positiveInt,
        grepMaxResults: positiveInt,
        grepMaxFileBytes: positiveInt,
        globMaxResults: positiveInt,
        shellTimeoutMs: positiveInt,
        shellMaxTimeoutMs: positiveInt,
      })
      .strict(),
    /** How shell commands run: in a nested bubblewrap per command, or directly. */
    commandSandbox: z.enum(["bwrap", "none"]),
    bwrapPath: absolutePath,
    /** The host's network, shared (agents.json `"network": true`). */
    network: z.boolean(),
    /**
     * agents.json `"network": { "allow": [...] }`: the jail keeps its own empty network
     * namespace and the only way out is the bot's egress proxy, a Unix socket at this path
     * (bound into the jail at the same path). The child forwards 127.0.0.1:<port> to it
     * and gives commands HTTP_PROXY/HTTPS_PROXY/ALL_PROXY. Never set with `network: true`.
     */
    egress: z.object({ socketPath: absolutePath }).strict().optional(),
    tmpSizeBytes: positiveInt,
    /** RLIMIT_DATA of every shell command. */
    memoryLimitBytes: positiveInt,
    /** Tasks one call's command may hold (the agent's process limit shared among its concurrent calls). */
    tasksPerCall: positiveInt.optional(),
    maxFrameBytes: positiveInt,
    /**
     * Set when the child runs as the agent's own uid (the bot is root): everything its
     * tools and commands create is private to that uid (umask 077), and every process of
     * that uid is this agent's, so when a call ends the child kills whatever of the uid
     * no running call owns (a command's `setsid` child that dropped its environment).
     */
    ownUid: z.boolean().optional(),
    /**
     * The bot's code where it lies under /tmp (a checkout in a temporary folder): each
     * command's and server's fresh /tmp would hide it, and the Node programs an agent with
     * an allow list runs load their proxy preload from it (net/proxy-environment.ts), as
     * MCP servers run from the bot's tree do. Bound again read-only there.
     */
    codePaths: z.array(absolutePath).max(16).optional(),
    /** None-mode commands each get pid, ipc and user namespaces and a read-only /proc (set when the child runs in its jail and the probe could make them). */
    commandNamespaces: z.boolean().optional(),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  })
  .strict();

export type ToolhostStartup = z.output<typeof toolhostStartupSchema>;

export class StartupMessageError extends Error {
  override readonly name = "StartupMessageError";
}

/** Parses the message from the child's environment; the error names the field that was wrong. */
export function parseStartupMessage(text: string | undefined): ToolhostStartup {
  if (text === undefined || text === "") {
    throw new StartupMessageError(
      `${STARTUP_VARIABLE} is not set: this process is started by the bot (or by \`laoding toolhost --agent ID\`), not by hand`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new StartupMessageError(`${STARTUP_VARIABLE} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = toolhostStartupSchema.safeParse(json);
  if (!parsed.success) {
    throw new StartupMessageError(
      `invalid ${STARTUP_VARIABLE}: ${describeIssues(parsed.error, { root: "the message" })}`,
    );
  }
  return parsed.data;
}
