/**
 * Agent definitions (`configs/agents.json`). Ids name folders and never change, so they
 * are validated strictly; a bad entry is named by its index and id.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { ConfigError } from "./config-error.js";

export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export const agentSchema = z
  .object({
    id: z.string().regex(AGENT_ID_PATTERN, {
      message: "must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -)",
    }),
    name: z.string().min(1).max(100),
    description: z.string().max(1000).optional(),
    /** Persona file inside bot_context/ (default: soul.md). */
    persona: z.string().min(1).optional(),
    /** Whether the agent's shell commands may use the network. */
    network: z.boolean().default(false),
    /** Whether the team experience library is enabled (a run-time override in agent_settings wins). */
    experienceLibrary: z.boolean().default(true),
    /** Extra folders only this agent may write (relative to the workspace); ALLOWED_DIRS are read-only for all. */
    writableDirs: z.array(z.string().min(1).max(4096)).max(32).default([]),
  })
  .strict();

export type AgentDefinition = z.output<typeof agentSchema>;

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
    throw new ConfigError(`${origin}: ${formatIssues(file.error)}`, {
      hint: 'Expected { "agents": [ { "id": "main", "name": "..." } ] }',
    });
  }
  const seen = new Set<string>();
  return file.data.agents.map((entry, index) => {
    const label = describeEntry(entry, index);
    const parsed = agentSchema.safeParse(entry);
    if (!parsed.success) {
      throw new ConfigError(`${origin}: ${label}: ${formatIssues(parsed.error)}`, {
        hint: "Fix that entry; ids never change once chosen because folders are named after them",
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

export function readAgentsFile(path: string): AgentDefinition[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read agents file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      hint: "Run `laoding init` to seed it",
    });
  }
  return parseAgents(text, path);
}

function describeEntry(entry: unknown, index: number): string {
  const id = typeof entry === "object" && entry !== null && "id" in entry ? (entry as { id: unknown }).id : undefined;
  return `agents[${index}]${id !== undefined ? ` (id ${JSON.stringify(id)})` : ""}`;
}

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "value"} ${issue.message}`)
    .join("; ");
}
