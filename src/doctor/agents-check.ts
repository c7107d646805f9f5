/**
 * agents.json with every finding: start-up (parseAgents) stops at the first bad entry;
 * the doctor validates each entry with the same schema and words, then lets parseAgents
 * read the file too, so the two never disagree on what start-up accepts.
 */
import { AGENT_ID_PATTERN, agentSchema, parseAgents, personaFile, type AgentDefinition } from "../config/agents.js";
import type { z } from "zod";
import { describeIssues } from "../validation/describe-issues.js";
import { failed, failedFromError, passed, type CheckResult } from "./check-result.js";

const TITLE = "agents.json";
const AGENT_FIELDS = Object.keys(agentSchema.shape);
const SHAPE = 'Expected { "agents": [ { "id": "main", "name": "..." } ] }';

export type AgentsCheck = { results: CheckResult[]; agents?: AgentDefinition[] };

export type AgentsFileAccess = {
  path: string;
  /** The file's text, or undefined when it does not exist. */
  read(): string | undefined;
  botContextDir: string;
  workspaceDir: string;
};

export function checkAgentsFile(file: AgentsFileAccess): AgentsCheck {
  const text = file.read();
  if (text === undefined)
    return {
      results: [
        failed("agents", TITLE, `${file.path} does not exist`, `laoding init --workspace ${file.workspaceDir}`),
      ],
    };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      results: [
        failed(
          "agents",
          TITLE,
          `${file.path} is not valid JSON: ${(error as Error).message}`,
          `Fix the JSON in ${file.path}. ${SHAPE}`,
        ),
      ],
    };
  }
  const entries =
    typeof json === "object" && json !== null && Array.isArray((json as { agents?: unknown }).agents)
      ? (json as { agents: unknown[] }).agents
      : undefined;
  const problems: CheckResult[] = [];
  if (entries !== undefined) {
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      const label = `${file.path}: agents[${index}]${idOf(entry) !== undefined ? ` (id ${JSON.stringify(idOf(entry))})` : ""}`;
      const parsed = agentSchema.safeParse(entry);
      if (!parsed.success)
        problems.push(
          failed(
            "agents",
            TITLE,
            `${label}: ${describeIssues(parsed.error, { root: "the entry", limit: Infinity })}`,
            entryFix(parsed.error, index, file.path),
          ),
        );
      else if (seen.has(parsed.data.id)) {
        problems.push(
          failed("agents", TITLE, `${label}: duplicate id "${parsed.data.id}"`, "Give every agent its own id"),
        );
      } else seen.add(parsed.data.id);
    });
  }
  if (problems.length > 0) return { results: problems };
  let agents: AgentDefinition[];
  try {
    agents = parseAgents(text, file.path);
    for (const agent of agents) personaFile(file.botContextDir, agent);
  } catch (error) {
    return { results: [failedFromError("agents", TITLE, error, `Fix ${file.path}. ${SHAPE}`)] };
  }
  return { results: [passed("agents", `${TITLE}: ${agents.map((agent) => agent.id).join(", ")}`)], agents };
}

/** The id first (folders are named after it), then unknown fields (often typos), then the rest. */
function entryFix(error: z.ZodError, index: number, path: string): string {
  if (error.issues.some((issue) => issue.path[0] === "id"))
    return `Set agents[${index}].id in ${path} to match ${AGENT_ID_PATTERN.source}; choose it once: the agent's folders are named after it`;
  const unknown = error.issues.flatMap((issue) => (issue.code === "unrecognized_keys" ? issue.keys : []));
  if (unknown.length > 0)
    return `Remove or correct ${unknown.map((key) => `\`${key}\``).join(", ")} in agents[${index}] of ${path}; an agent may have ${AGENT_FIELDS.join(", ")}`;
  return `Fix agents[${index}] in ${path} (docs/configuration.md describes every field)`;
}

function idOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null && "id" in entry ? (entry as { id: unknown }).id : undefined;
}
