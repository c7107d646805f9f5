/**
 * Agent definitions (`configs/agents.json`). Ids name folders and never change, so they
 * are validated strictly; a bad entry is named by its index and id.
 */
import { readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { z } from "zod";
import { describeIssues } from "../validation/describe-issues.js";
import { mcpServersSchema, networkSchema, referencedNames } from "./agent-reach.js";
import { ConfigError, jsonErrorLocation, locateJsonPath } from "./config-error.js";
import { writeConfigFileAtomic } from "./env-file.js";

export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** An env variable's name: bot credentials are named, never written into agents.json. */
const envName = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]{0,127}$/, { message: "must be an env variable name (A-Z, 0-9, _), such as TG_TOKEN_OPS" });
const userIds = z.array(z.string().min(1).max(128)).max(10_000);

/** The agent's own Telegram bot: its token lives in the env variable `tokenEnv`. */
const telegramBindingSchema = z
  .object({
    tokenEnv: envName,
    /** User ids this bot answers (`*` for everyone); absent: everyone, with a warning. */
    allowedUsers: userIds.optional(),
    /** User ids that may run operator commands on this bot (OPERATOR_IDS entries for telegram count too). */
    operators: userIds.default([]),
  })
  .strict();

/** The agent's own Feishu app (open_ids differ per app, so its lists are its own). */
const feishuBindingSchema = z
  .object({
    appIdEnv: envName,
    appSecretEnv: envName,
    allowedUsers: userIds.optional(),
    operators: userIds.default([]),
  })
  .strict();

export type TelegramBinding = z.output<typeof telegramBindingSchema>;
export type FeishuBinding = z.output<typeof feishuBindingSchema>;

export const agentSchema = z
  .object({
    id: z.string().regex(AGENT_ID_PATTERN, {
      message: "must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -)",
    }),
    name: z.string().min(1).max(100),
    description: z.string().max(1000).optional(),
    /** Persona file inside bot_context/ (default: soul.md); a relative path that stays inside. */
    persona: z
      .string()
      .min(1)
      .max(255)
      .refine((path) => !path.startsWith("/") && !path.includes("\0") && !path.split(/[\\/]/).includes(".."), {
        message: "must be a file inside bot_context/ (a relative path without ..), such as soul.md",
      })
      .optional(),
    /** What the agent's commands and tools may reach: nothing, the host's network, or an allow list through the egress proxy (agent-reach.ts). */
    network: networkSchema,
    /** MCP servers whose tools join the agent's (`mcp.<server>.<tool>`), in Claude Desktop's shape. */
    mcpServers: mcpServersSchema,
    /** Whether the team experience library is enabled (a run-time override in agent_settings wins). */
    experienceLibrary: z.boolean().default(true),
    /** Extra folders only this agent may write (relative to the workspace); ALLOWED_DIRS are read-only for all. */
    writableDirs: z.array(z.string().min(1).max(4096)).max(32).default([]),
    /** The agent's own Telegram bot (several agents side by side, each with its own bot). */
    telegram: telegramBindingSchema.optional(),
    /** The agent's own Feishu/Lark app. */
    feishu: feishuBindingSchema.optional(),
  })
  .strict();

export type AgentDefinition = z.output<typeof agentSchema>;

const AGENT_FIELDS = Object.keys(agentSchema.shape);

const agentsFileSchema = z.object({ agents: z.array(z.unknown()).min(1, { message: "lists no agents" }) }).strict();

/**
 * The agents of an agents.json text. Every entry is checked before anything is thrown, so
 * the error's findings list each problem at once, each at its `file:line:column`.
 */
export function parseAgents(text: string, origin: string): AgentDefinition[] {
  const shape = 'Expected { "agents": [ { "id": "main", "name": "..." } ] }';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${origin}${jsonErrorLocation(text, error as Error)}: not valid JSON: ${(error as Error).message}`,
      { hint: shape },
    );
  }
  const file = agentsFileSchema.safeParse(json);
  if (!file.success) {
    const at = locateJsonPath(text, origin, file.error.issues[0]?.path ?? []);
    throw new ConfigError(`${at}: ${describeIssues(file.error, { knownFields: ["agents"], root: "the file" })}`, {
      hint: shape,
    });
  }
  const seen = new Set<string>();
  const findings: string[] = [];
  let aboutId = false;
  const agents = file.data.agents.flatMap((entry, index) => {
    const label = describeEntry(entry, index);
    const parsed = agentSchema.safeParse(entry);
    if (!parsed.success) {
      aboutId ||= parsed.error.issues.some((issue) => issue.path[0] === "id");
      const first = parsed.error.issues[0];
      // An unknown field is found at the field itself, the rest at what they name.
      const path = first?.code === "unrecognized_keys" ? [...first.path, first.keys[0] as string] : (first?.path ?? []);
      findings.push(
        `${locateJsonPath(text, origin, ["agents", index, ...path])}: ${label}: ${describeIssues(parsed.error, { knownFields: AGENT_FIELDS, root: "the entry", limit: Infinity })}`,
      );
      return [];
    }
    if (seen.has(parsed.data.id)) {
      findings.push(
        `${locateJsonPath(text, origin, ["agents", index, "id"])}: ${label}: duplicate id "${parsed.data.id}"; every agent needs its own id`,
      );
      return [];
    }
    seen.add(parsed.data.id);
    return [parsed.data];
  });
  if (findings.length > 0) {
    const hint = aboutId
      ? "Fix the id; choose it once: the agent's folders are named after it"
      : `Fix ${findings.length === 1 ? "that entry" : "those entries"} (docs/configuration.md describes every field)`;
    throw new ConfigError(
      findings.length === 1
        ? (findings[0] as string)
        : `${origin}: ${findings.length} problems:\n  - ${findings.join("\n  - ")}`,
      { hint, findings },
    );
  }
  return agents;
}

/** The env variable names agents.json declares for bot credentials and MCP servers' `$NAME`s (they are not typos). */
export function declaredCredentialNames(agents: AgentDefinition[]): string[] {
  return agents.flatMap((agent) => [
    ...(agent.telegram ? [agent.telegram.tokenEnv] : []),
    ...(agent.feishu ? [agent.feishu.appIdEnv, agent.feishu.appSecretEnv] : []),
    ...mcpReferences(agent),
  ]);
}

/** The variables an agent's MCP servers name as `$NAME`: secrets, passed only to that server. */
export function mcpReferences(agent: AgentDefinition): string[] {
  // Definitions built in code (tests, the Go import) may leave the field out.
  return Object.values(agent.mcpServers ?? {}).flatMap((server) => referencedNames(server));
}

export function readAgentsFile(path: string): AgentDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(
      `cannot read agents file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        hint: `Run \`laoding init --workspace ${dirname(dirname(path))}\` to create it (or check --workspace / AGENT_WORKSPACE_DIR)`,
      },
    );
  }
  return parseAgents(text, path);
}

/**
 * Changes the operators of an agent's own bot in agents.json (`laoding operators --agent`):
 * the file must be valid before and after, and is replaced atomically. The JSON is written
 * back with two-space indentation (JSON has no comments to keep).
 */
export function editBotOperators(
  path: string,
  agentId: string,
  channel: "telegram" | "feishu",
  edit: (operators: string[]) => string[],
): string[] {
  const text = readFileSync(path, "utf8");
  parseAgents(text, path);
  const json = JSON.parse(text) as { agents: Record<string, unknown>[] };
  const entry = json.agents.find((candidate) => candidate.id === agentId);
  const binding = entry?.[channel] as { operators?: string[] } | undefined;
  if (!binding)
    throw new ConfigError(`agent "${agentId}" has no ${channel} bot of its own in ${path}`, {
      hint: `Its ${channel} operators are OPERATOR_IDS: leave out --agent`,
    });
  binding.operators = edit(binding.operators ?? []);
  const updated = `${JSON.stringify(json, null, 2)}\n`;
  parseAgents(updated, path);
  writeConfigFileAtomic(path, updated);
  return binding.operators;
}

function describeEntry(entry: unknown, index: number): string {
  const id = typeof entry === "object" && entry !== null && "id" in entry ? (entry as { id: unknown }).id : undefined;
  return `agents[${index}]${id !== undefined ? ` (id ${JSON.stringify(id)})` : ""}`;
}

/**
 * The agent's persona file, after realpath: a link in bot_context/ that leads elsewhere
 * (or a path that escaped the schema) is refused, naming the entry, so no host file can
 * reach the system prompt sent to the model. Undefined when the file does not exist.
 */
export function personaFile(botContextDir: string, agent: AgentDefinition): string | undefined {
  const path = join(botContextDir, agent.persona ?? "soul.md");
  let real: string;
  let realRoot: string;
  try {
    realRoot = realpathSync(botContextDir);
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  const rel = relative(realRoot, real);
  if (rel === "" || rel.split(sep)[0] === ".." || isAbsolute(rel)) {
    throw new ConfigError(
      `agents.json: agent "${agent.id}": persona ${JSON.stringify(agent.persona ?? "soul.md")} resolves to ${real}, outside ${realRoot}`,
      {
        hint: "Put the persona file itself in bot_context/ (not a link to elsewhere)",
      },
    );
  }
  return real;
}
