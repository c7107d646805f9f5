/**
 * The agent's MCP servers as its toolhost child runs them: configured by the parent
 * (`mcp.configure`), started lazily (nothing runs until tools are first asked for),
 * supervised (a crash backs off 1 s, 2 s, 4 s … up to a minute and the next use after
 * that starts it again; nothing ever takes the child down), stopped with the child.
 *
 * A server that cannot run is one warning naming it and why, its state (`backoff`, or
 * `failed` when trying again cannot help) and its last error in `mcp.status`; its tools
 * are simply absent from the list, and a call to one is MCP_UNAVAILABLE with that error.
 *
 * States: `idle` (configured, never started), `starting`, `running`, `backoff` (stopped
 * or failed to start; started again on the first use after its delay), `failed` (will
 * not be started again until its configuration changes: garbage on stdout, a cwd outside
 * the working tree, a remote server without network), `stopped` (the child is exiting).
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { MaybePromise } from "../maybe-async.js";
import type {
  McpServerConfig,
  McpServerStatus,
  ParamsOf,
  ResultOf,
  mcpConfigureMethod,
  mcpTestMethod,
} from "../protocol.js";
import { ToolError } from "../tool-error.js";
import type { Tool, ToolOutput } from "../tools/define-tool.js";
import { backOffDelay, DEFAULT_BACK_OFF, type BackOffPolicy } from "./back-off.js";
import { callFailure, isMcpError, resultOutput } from "./call-result.js";
import { redact, secretsOf } from "./redact.js";
import { startSession, type LaunchStdio, type ServerSession, type StartFailure } from "./server-session.js";
import { serverTools, type ServerTool } from "./server-tools.js";

export type McpConfigureParams = ParamsOf<typeof mcpConfigureMethod>;
export type McpTestResult = ResultOf<typeof mcpTestMethod>;

export type McpServersOptions = {
  logger: Logger;
  /** Real path of the agent's working tree: stdio servers run there, or in their `cwd` inside it. */
  workTree: string;
  /** What to spawn for a stdio server (the sandboxed launch; `plainStdioLaunch` without a sandbox). */
  launchStdio: LaunchStdio;
  /** Reaches remote servers (through the egress proxy); without it remote servers are `failed`. */
  fetch?: FetchLike | undefined;
  clock?: { now(): number };
  backOff?: BackOffPolicy;
  /** How long a server may take to exit once its input is closed before it is killed. */
  stopGraceMs?: number;
};

export type McpServers = {
  /** Replaces the set of servers: one whose configuration changed is stopped, and started again when next used. */
  configure(params: McpConfigureParams): void;
  /** Every running server's tools, starting the servers that may start and waiting (within the start timeout) for them. */
  tools(): Promise<Tool[]>;
  /** The tool a call names (`mcp.<server>.<tool>`): undefined when no such tool; a server that is not running gives a tool that answers MCP_UNAVAILABLE. */
  find(name: string): MaybePromise<Tool | undefined>;
  /** The names of the tools of running servers (for an unknown tool's error). */
  names(): string[];
  status(): McpServerStatus[];
  /** Starts a fresh instance of one server, apart from the running one, lists its tools and stops it. */
  test(server: string): Promise<McpTestResult>;
  /** Stops every server (the child is exiting); nothing starts afterwards. */
  stopAll(): Promise<void>;
};

/** Until the parent says otherwise (mcp.configure always does). */
const DEFAULT_TIMEOUTS = { startTimeoutMs: 30_000, callTimeoutMs: 120_000 };
const DEFAULT_STOP_GRACE_MS = 1_000;
/** How long a call that lost its server waits for the reason (the process's exit) before answering without it. */
const END_REASON_WAIT_MS = 1_000;

/** One configured server and what is known of it. */
type Slot = {
  config: McpServerConfig;
  key: string;
  secrets: string[];
  state: McpServerStatus["state"];
  session?: ServerSession;
  starting?: Promise<void>;
  refreshing?: Promise<void>;
  refreshQueued?: boolean;
  tools: Map<string, ServerTool>;
  restarts: number;
  failuresInRow: number;
  retryAt: number;
  runningSince: number;
  lastError?: string;
  lastErrorAt?: number;
  /** Replaced by a new configuration or stopped with the child: its sessions end when they come up. */
  retired: boolean;
  /** Warnings about its tools already given: a tool skipped at every start or refresh is said once. */
  warned: Set<string>;
};

export function createMcpServers(options: McpServersOptions): McpServers {
  const clock = options.clock ?? { now: () => Date.now() };
  const backOff = options.backOff ?? DEFAULT_BACK_OFF;
  const stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  const { logger } = options;
  let timeouts = { ...DEFAULT_TIMEOUTS };
  let slots: Slot[] = [];
  let stopped = false;
  const closing = new Set<Promise<void>>();

  const closeSession = (session: ServerSession | undefined) => {
    if (!session) return;
    const done = session.close().finally(() => closing.delete(done));
    closing.add(done);
  };

  const open = (slot: Slot, onListChanged: () => void, onDown: (reason: string, kind: "crash" | "garbage") => void) =>
    startSession(slot.config, {
      workTree: options.workTree,
      launchStdio: options.launchStdio,
      fetch: options.fetch,
      startTimeoutMs: timeouts.startTimeoutMs,
      stopGraceMs,
      onListChanged,
      onDown,
      debug: (message) => logger.debug({ server: slot.config.name }, message),
    });

  /**
   * Records a failure: `failed` for good, or `backoff` until the next delay has passed, and
   * says it in one warning (`message`); the same failure again, start after start, is not news.
   */
  const failed = (slot: Slot, reason: string, permanent: boolean, message: string) => {
    const now = clock.now();
    const repeated = slot.lastError === reason;
    slot.lastError = reason;
    slot.lastErrorAt = now;
    slot.tools = new Map();
    if (permanent) {
      slot.state = "failed";
    } else {
      // A server that ran healthily for a while starts its count of failures afresh.
      if (slot.state === "running" && now - slot.runningSince >= backOff.healthyMs) slot.failuresInRow = 0;
      slot.failuresInRow += 1;
      slot.state = "backoff";
      slot.retryAt = now + backOffDelay(backOff, slot.failuresInRow);
    }
    const log = { server: slot.config.name, state: slot.state, reason };
    if (repeated && slot.restarts > 0) logger.debug(log, message);
    else logger.warn(log, message);
  };

  /** The warning for a server that printed garbage, whether it had answered yet or not. */
  const garbageMessage = (slot: Slot) => `${slot.config.name} printed something that is not MCP on stdout; stopped`;

  /**
   * Lists a server's tools again after it said they changed. One listing at a time, and at
   * most one more queued: a server that announces changes in a burst is listed twice, not
   * once per announcement.
   */
  const refresh = (slot: Slot, session: ServerSession) => {
    if (slot.refreshQueued) return;
    slot.refreshQueued = true;
    const run = async () => {
      slot.refreshQueued = false;
      try {
        const listing = await session.listTools(timeouts.startTimeoutMs);
        if (slot.session === session && slot.state === "running") slot.tools = toolsOf(slot, session, listing);
      } catch (error) {
        logger.warn(
          { server: slot.config.name },
          `MCP server ${slot.config.name}: its tools changed but listing them again failed: ${redact((error as Error).message, slot.secrets)}`,
        );
      }
    };
    const done: Promise<void> = (slot.refreshing ?? Promise.resolve()).then(run).finally(() => {
      if (slot.refreshing === done) delete slot.refreshing;
    });
    slot.refreshing = done;
  };

  const start = (slot: Slot): Promise<void> => {
    if (slot.state !== "idle") slot.restarts += 1;
    slot.state = "starting";
    const session = open(
      slot,
      () => {
        if (slot.session === session) refresh(slot, session);
      },
      (reason, kind) => {
        closeSession(session); // already stopping: stopAll waits for it too
        if (slot.session !== session || slot.retired) return;
        delete slot.session;
        if (kind === "garbage") failed(slot, reason, true, garbageMessage(slot));
        else failed(slot, reason, false, `MCP server ${slot.config.name} stopped unexpectedly: ${reason}`);
      },
    );
    slot.session = session;
    const started = session.ready.then(
      (listing) => {
        if (slot.retired || slot.session !== session) return closeSession(session);
        slot.state = "running";
        slot.runningSince = clock.now();
        slot.tools = toolsOf(slot, session, listing);
      },
      (error: StartFailure) => {
        closeSession(session); // already stopping: stopAll waits for it too
        if (slot.session !== session) return;
        delete slot.session;
        if (slot.retired) return;
        const message =
          error.kind === "garbage"
            ? garbageMessage(slot)
            : `MCP server ${slot.config.name} failed to start: ${error.message}`;
        failed(slot, error.message, error.permanent, message);
      },
    );
    slot.starting = started.finally(() => delete slot.starting);
    return slot.starting;
  };

  /** Starts a server that may start now; resolves once it runs or has failed (never rejects). */
  const ensureStarted = (slot: Slot): Promise<void> | undefined => {
    if (stopped || slot.retired) return undefined;
    if (slot.state === "starting") return slot.starting;
    if (slot.state === "idle" || (slot.state === "backoff" && clock.now() >= slot.retryAt)) return start(slot);
    return undefined;
  };

  const toolsOf = (slot: Slot, session: ServerSession, listing: readonly unknown[]) =>
    serverTools(
      slot.config.name,
      listing,
      (tool, args, signal) => callTool(slot, session, tool, args, signal),
      (message) => {
        if (slot.warned.has(message)) return;
        slot.warned.add(message);
        logger.warn({ server: slot.config.name }, redact(message, slot.secrets));
      },
    );

  const callTool = async (
    slot: Slot,
    session: ServerSession,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolOutput> => {
    if (slot.session !== session || slot.state !== "running") throw unavailable(slot);
    const server = slot.config.name;
    const timeoutMs = timeouts.callTimeoutMs;
    let output: ToolOutput;
    try {
      const result = await session.callTool(tool, args, { signal, timeoutMs });
      output = resultOutput(server, result);
    } catch (error) {
      if (error instanceof ToolError) throw new ToolError(error.code, redact(error.message, slot.secrets));
      // A server that went away (during the call, or just before it: the SDK's "Not
      // connected"): its session says why, its exit, a moment later.
      const closed = isMcpError(error, ErrorCode.ConnectionClosed) || (error as Error)?.message === "Not connected";
      const endReason = closed ? await session.endReason(END_REASON_WAIT_MS) : undefined;
      const failure = callFailure(error, { server, tool, timeoutMs, signal, closed, endReason });
      // A remote server that stopped answering: end the session so the next use connects afresh.
      if (failure.serverGone) session.fail(failure.error.message);
      throw new ToolError(failure.error.code, redact(failure.error.message, slot.secrets));
    }
    return { output: redact(output.output, slot.secrets), truncated: output.truncated };
  };

  const unavailable = (slot: Slot): ToolError => {
    const why =
      slot.state === "backoff"
        ? `${slot.lastError ?? "it stopped"}; next start in ${Math.ceil(Math.max(0, slot.retryAt - clock.now()) / 1000)} s`
        : (slot.lastError ?? `it is ${slot.state}`);
    return new ToolError("MCP_UNAVAILABLE", `MCP server ${slot.config.name} is not running (${slot.state}): ${why}`);
  };

  const unavailableTool = (slot: Slot, name: string): Tool => ({
    name,
    description: "",
    inputSchema: ANY_ARGS,
    jsonSchema: {},
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    execute: () => {
      throw unavailable(slot);
    },
  });

  const lookUp = (slot: Slot, name: string): Tool | undefined =>
    slot.state === "running" ? slot.tools.get(name)?.tool : unavailableTool(slot, name);

  return {
    configure(params) {
      timeouts = { startTimeoutMs: params.startTimeoutMs, callTimeoutMs: params.callTimeoutMs };
      const previous = new Map(slots.map((slot) => [slot.config.name, slot]));
      slots = params.servers.map((config) => {
        const key = configKey(config);
        const kept = previous.get(config.name);
        if (kept && kept.key === key) {
          previous.delete(config.name);
          return kept;
        }
        return newSlot(config, key);
      });
      for (const slot of previous.values()) retire(slot);
      if (stopped) for (const slot of slots) slot.state = "stopped";
    },

    async tools() {
      await Promise.all(slots.map((slot) => ensureStarted(slot) ?? Promise.resolve()));
      await Promise.all(slots.map((slot) => slot.refreshing ?? Promise.resolve()));
      return slots.flatMap((slot) =>
        slot.state === "running" ? [...slot.tools.values()].map((entry) => entry.tool) : [],
      );
    },

    find(name) {
      const server = /^mcp\.([^.]+)\./.exec(name)?.[1];
      const slot = slots.find((candidate) => candidate.config.name === server);
      if (!slot) return undefined;
      const starting = ensureStarted(slot);
      if (!starting) return lookUp(slot, name);
      return starting.then(() => lookUp(slot, name));
    },

    names: () => slots.flatMap((slot) => (slot.state === "running" ? [...slot.tools.keys()] : [])),

    status: () =>
      slots.map((slot) => ({
        name: slot.config.name,
        transport: slot.config.transport,
        state: slot.state,
        tools: [...slot.tools.values()].map(({ tool }) => ({ name: tool.name, description: tool.description })),
        restarts: slot.restarts,
        ...(slot.lastError === undefined ? {} : { lastError: slot.lastError, lastErrorAt: slot.lastErrorAt }),
      })),

    async test(server) {
      const began = performance.now();
      const slot = slots.find((candidate) => candidate.config.name === server);
      const elapsed = () => Math.round(performance.now() - began);
      if (!slot) {
        const known = slots.map((candidate) => candidate.config.name).join(", ") || "none";
        return {
          ok: false,
          tools: [],
          error: `no MCP server named ${server} is configured (configured: ${known})`,
          durationMs: 0,
        };
      }
      const session = open(
        slot,
        () => undefined,
        () => undefined,
      );
      try {
        const listing = await session.ready;
        const tools = serverTools(server, listing, notCallable, () => undefined);
        return {
          ok: true,
          tools: [...tools.values()].map(({ tool }) => ({ name: tool.name, description: tool.description })),
          durationMs: elapsed(),
        };
      } catch (error) {
        return { ok: false, tools: [], error: (error as Error).message, durationMs: elapsed() };
      } finally {
        await session.close();
      }
    },

    async stopAll() {
      stopped = true;
      for (const slot of slots) retire(slot, "stopped");
      await Promise.all([...closing]);
    },
  };

  function retire(slot: Slot, state?: McpServerStatus["state"]) {
    slot.retired = true;
    if (state) slot.state = state;
    closeSession(slot.session);
    delete slot.session;
  }
}

function newSlot(config: McpServerConfig, key: string): Slot {
  return {
    config,
    key,
    secrets: secretsOf(config),
    state: "idle",
    tools: new Map(),
    restarts: 0,
    failuresInRow: 0,
    retryAt: 0,
    runningSince: 0,
    retired: false,
    warned: new Set(),
  };
}

/** Equal for equal configurations whatever the order of their keys. */
function configKey(config: McpServerConfig): string {
  return JSON.stringify(config, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
}

const notCallable = (): Promise<ToolOutput> => Promise.reject(new Error("a tested server is not called"));

/** A tool of a server that is not running takes any arguments: the call is refused as unavailable, not as invalid. */
const ANY_ARGS = z.unknown();
