/**
 * Asks the workspace's running bot, through its admin API, for the live state of agents'
 * MCP servers (`laoding mcp list`). Only the bot's process holds its toolhost children, so
 * this is the one place live state can come from. The answer is validated before use; any
 * reason it cannot be had becomes one sentence for the operator, never an exception.
 */
import { z } from "zod";
import type { Config } from "../config/load-config.js";
import { runningBotPid } from "../runtime/bot-pid-file.js";
import { MCP_SERVER_STATES } from "../toolhost/protocol.js";
import type { AgentMcpView } from "./mcp-view.js";

const serverSchema = z.object({
  name: z.string(),
  transport: z.enum(["stdio", "http"]),
  state: z.enum([...MCP_SERVER_STATES, "not started"]),
  tools: z.array(z.object({ name: z.string(), description: z.string() })),
  restarts: z.number(),
  lastError: z.string().optional(),
  lastErrorAt: z.number().optional(),
  configured: z.union([z.object({ command: z.string() }), z.object({ urlHost: z.string() })]),
});
const answerSchema = z.object({
  ok: z.literal(true),
  data: z.object({
    agentId: z.string(),
    running: z.boolean(),
    botAttached: z.boolean(),
    servers: z.array(serverSchema),
  }),
});
const failureSchema = z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) });

export type BotMcpAnswer =
  /** Per agent id: the bot's view, or undefined when the running bot has no such agent. */
  { available: true; url: string; views: Map<string, AgentMcpView | undefined> } | { available: false; reason: string };

export type BotMcpOptions = {
  dataDir: string;
  config: Pick<Config, "ADMIN_HOST" | "ADMIN_PORT" | "ADMIN_TOKEN">;
  agentIds: string[];
  timeoutMs?: number;
};

export async function askBotForMcp(options: BotMcpOptions): Promise<BotMcpAnswer> {
  const { config } = options;
  const pid = runningBotPid(options.dataDir);
  if (pid === undefined) return { available: false, reason: "the bot is not running in this workspace" };
  if (config.ADMIN_PORT === 0)
    return {
      available: false,
      reason: `the bot runs (pid ${pid}) but its admin API is off (ADMIN_PORT=0); set ADMIN_PORT and ADMIN_TOKEN and restart it to see live state`,
    };
  if (!config.ADMIN_TOKEN)
    return { available: false, reason: "ADMIN_TOKEN is not set in this configuration, so the bot cannot be asked" };
  const url = adminUrl(config.ADMIN_HOST, config.ADMIN_PORT);
  const views = new Map<string, AgentMcpView | undefined>();
  for (const agentId of options.agentIds) {
    const answer = await askOne(url, agentId, config.ADMIN_TOKEN, options.timeoutMs ?? 3_000);
    if (typeof answer === "string") return { available: false, reason: answer };
    if (answer && !answer.botAttached)
      return {
        available: false,
        reason: `the admin API at ${url} runs apart from the bot (laoding admin), so it cannot see the bot's toolhosts`,
      };
    views.set(agentId, answer);
  }
  return { available: true, url, views };
}

/** The view, undefined when the bot has no such agent, or a sentence saying why there is no answer. */
async function askOne(
  url: string,
  agentId: string,
  token: string,
  timeoutMs: number,
): Promise<AgentMcpView | undefined | string> {
  let response: Response;
  try {
    response = await fetch(`${url}/v1/agents/${encodeURIComponent(agentId)}/mcp`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return `the bot's admin API at ${url} does not answer (${cause})`;
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return `the bot's admin API at ${url} answered HTTP ${response.status} without JSON`;
  }
  const answer = answerSchema.safeParse(body);
  if (answer.success) return answer.data.data;
  const failure = failureSchema.safeParse(body);
  const code = failure.success ? failure.data.error.code : undefined;
  if (code === "AGENT_NOT_FOUND") return undefined;
  if (code === "UNAUTHORIZED")
    return `the bot's admin API at ${url} refused this ADMIN_TOKEN (is it the bot's configs/env?)`;
  if (code === "NOT_FOUND") return `the bot's admin API at ${url} has no MCP view (is the bot an older version?)`;
  return `the bot's admin API at ${url} answered HTTP ${response.status}${failure.success ? `: ${failure.data.error.message}` : ", not in the expected shape"}`;
}

/** Where to reach an admin API bound to `host`: a wildcard bind is reached on loopback. */
export function adminUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" ? "127.0.0.1" : host === "::" || host === "[::]" ? "::1" : host;
  return `http://${reachable.includes(":") && !reachable.startsWith("[") ? `[${reachable}]` : reachable}:${port}`;
}
