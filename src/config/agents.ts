/**
 * Agent definitions (`configs/agents.json`). Ids name folders and never change, so they
 * are validated strictly; a bad entry is named by its index and id.
 */
import { readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { z } from "zod";
import { describeIssues } from "../validation/describe-issues.js";
import { ConfigError } from "./config-error.js";

export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** An env variable's name: bot credentials are named, never written into agents.json. */
const envName = z.string().regex(/^[A-Z][A-Z0-9_]{0,127}$/, { message: "must be an env variable name (A-Z, 0-9, _), such as TG_TOKEN_OPS" });
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
    /** Whether the agent's shell commands may use the network. */
    network: z.boolean().default(false),
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

export function parseAgents(text: string, origin: string): AgentDefinition[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${origin} is not valid JSON: ${(error as Error).message}`, {
      hint: 'Expected { "agents": [ { "id": "main", "name": "..." } ] }',
    });
  }
  const file = agentsFileSchema.safeParse(json);
  if (!file.success) {
    throw new ConfigError(`${origin}: ${describeIssues(file.error, { knownFields: ["agents"], root: "the file" })}`, {
      hint: 'Expected { "agents": [ { "id": "main", "name": "..." } ] }',
    });
  }
  const seen = new Set<string>();
  return file.data.agents.map((entry, index) => {
    const label = describeEntry(entry, index);
    const parsed = agentSchema.safeParse(entry);
    if (!parsed.success) {
      const aboutId = parsed.error.issues.some((issue) => issue.path[0] === "id");
      throw new ConfigError(`${origin}: ${label}: ${describeIssues(parsed.error, { knownFields: AGENT_FIELDS, root: "the entry" })}`, {
        hint: aboutId ? "Fix the id; choose it once: the agent's folders are named after it" : `Fix that entry; the fields an agent may have are ${AGENT_FIELDS.join(", ")}`,
      });
    }
    if (seen.has(parsed.data.id)) {
      throw new ConfigError(`${origin}: ${label}: duplicate id "${parsed.data.id}"`, {
        hint: "Every agent needs its own id",
      });
    }
    seen.add(parsed.data.id);
    return parsed.data;
  });
}

/** The env variable names agents.json declares for bot credentials (they are not typos). */
export function declaredCredentialNames(agents: AgentDefinition[]): string[] {
  return agents.flatMap((agent) => [...(agent.telegram ? [agent.telegram.tokenEnv] : []), ...(agent.feishu ? [agent.feishu.appIdEnv, agent.feishu.appSecretEnv] : [])]);
}

export function readAgentsFile(path: string): AgentDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read agents file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      hint: `Run \`laoding init --workspace ${dirname(dirname(path))}\` to create it (or check --workspace / AGENT_WORKSPACE_DIR)`,
    });
  }
  return parseAgents(text, path);
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
    throw new ConfigError(`agents.json: agent "${agent.id}": persona ${JSON.stringify(agent.persona ?? "soul.md")} resolves to ${real}, outside ${realRoot}`, {
      hint: "Put the persona file itself in bot_context/ (not a link to elsewhere)",
    });
  }
  return real;
}
