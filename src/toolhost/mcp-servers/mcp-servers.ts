/**
 * The agent's MCP servers as its toolhost child runs them: configured by the parent
 * (`mcp.configure`), started lazily (nothing runs until tools are first asked for),
 * supervised (a crash backs off 1 s, 2 s, 4 s … up to a minute and the next use after
 * that starts it again, in the background: a turn never waits for a server that failed
 * before; nothing ever takes the child down), stopped with the child.
 *
 * A server that cannot run is one warning naming it and why, its state (`backoff`, or
 * `failed` when trying again cannot help) and its last error in `mcp.status`; its tools
 * are simply absent from the list, and a call to one is MCP_UNAVAILABLE with that error.
 *
 * States: `idle` (configured, never started), `starting`, `running`, `backoff` (stopped
 * or failed to start; started again on the first use after its delay), `failed` (will
 * not be started again until its configuration changes: garbage on stdout, a cwd outside
 * the working tree, a remote server without network), `stopped` (the child is exiting).
 *
 * Everything said about a server (status, last error, test results, tool descriptions,
 * outputs and errors, log lines) has the `$NAME` values the parent resolved hidden
 * (redact.ts). The tools offered in one listing are bounded (`LISTING_BUDGET`): the
 * listing travels in one frame of the protocol, and the model reads it on every request.
 */
import type { Logger } from "pino";
import { z } from "zod";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { MaybePromise } from "../maybe-async.js";
import type { McpConfigureParams, McpServerConfig, McpServerStatus, ResultOf, mcpTestMethod } from "../protocol.js";
import { ToolError } from "../tool-error.js";
import type { Tool, ToolOutput } from "../tools/define-tool.js";
import { backOffDelay, DEFAULT_BACK_OFF, type BackOffPolicy } from "./back-off.js";
import { callFailure, isMcpError, resultOutput } from "./call-result.js";
import { redact, redactJson, secretsOf } from "./redact.js";
import { startSession, type LaunchStdio, type ServerSession, type StartFailure } from "./server-session.js";
import { serverTools, type Hide, type ServerTool } from "./server-tools.js";

export type { McpConfigureParams };
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
  /** Bytes of tool descriptions in one status (default STATUS_DESCRIPTION_BYTES). */
  statusDescriptionBytes?: number;
};

export type McpServers = {
  /** Replaces the set of servers: one whose configuration changed is stopped, and started again when next used. */
  configure(params: McpConfigureParams): void;
  /**
   * Every running server's tools within `LISTING_BUDGET`. Waits (within the start timeout)
   * only for servers starting for the first time; a server whose back-off has passed is
   * started again in the background, and its tools are in a later listing.
   */
  tools(): Promise<Tool[]>;
  /**
   * The tool a call names (`mcp.<server>.<tool>`): undefined when no such tool; a server
   * that is not running gives a tool that answers MCP_UNAVAILABLE. A server that may start
   * (first start, or its back-off has passed) is started and waited for: the call names it.
   */
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

/**
 * The MCP tools of one listing, across all servers: the listing goes to the parent in one
 * frame of at most 16 MiB (16 servers could list 1,000 tools of 32 KiB schemas each), and
 * the model reads every tool on every request. Beyond it, tools are left out in server
 * order (the servers first in agents.json keep theirs), each server saying how many once.
 */
export const LISTING_BUDGET = { tools: 256, bytes: 2 * 1024 * 1024 };
/**
 * Bytes of tool descriptions in one `mcp.status`: it names every tool of every server (up
 * to 16 × 1,000 of 1 KiB descriptions), also in one frame; beyond, descriptions are empty.
 */
export const STATUS_DESCRIPTION_BYTES = 4 * 1024 * 1024;

/** One configured server and what is known of it. */
type Slot = {
  config: McpServerConfig;
  key: string;
  /** The values its texts must not show (redact.ts). */
  secrets: string[];
  state: McpServerStatus["state"];
  session?: ServerSession;
  starting?: Promise<void>;
  refreshing?: Promise<void>;
  refreshQueued?: boolean;
  tools: Map<string, ServerTool>;
  /**
   * The tools it had when it last stopped, listed while it waits to start again: a call
   * then answers MCP_UNAVAILABLE with its next start, where a tool missing from the list
   * would only be "unknown" to the model.
   */
  lastTools?: Map<string, ServerTool>;
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
  const statusDescriptionBytes = options.statusDescriptionBytes ?? STATUS_DESCRIPTION_BYTES;
  const { logger } = options;
  const hideFor = (slot: Slot): Hide => ({
    text: (text) => redact(text, slot.secrets),
    json: (value) => redactJson(value, slot.secrets),
  });
  /** A log line about a server, its message with the secrets hidden. */
  const log = (level: "warn" | "debug", slot: Slot, fields: Record<string, unknown>, message: string) =>
    logger[level]({ server: slot.config.name, ...fields }, redact(message, slot.secrets));
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
      debug: (message) => log("debug", slot, {}, message),
      hide: hideFor(slot).text,
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
    if (slot.tools.size > 0) slot.lastTools = slot.tools;
    slot.tools = new Map();
    if (permanent) {
      slot.state = "failed";
      delete slot.lastTools;
    } else {
      // A server that ran healthily for a while starts its count of failures afresh.
      if (slot.state === "running" && now - slot.runningSince >= backOff.healthyMs) slot.failuresInRow = 0;
      slot.failuresInRow += 1;
      slot.state = "backoff";
      slot.retryAt = now + backOffDelay(backOff, slot.failuresInRow);
    }
    const fields = { state: slot.state, reason: redact(reason, slot.secrets) };
    log(repeated && slot.restarts > 0 ? "debug" : "warn", slot, fields, message);
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
        log(
          "warn",
          slot,
          {},
          `MCP server ${slot.config.name}: its tools changed but listing them again failed: ${(error as Error).message}`,
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

  /**
   * For a listing: the start to wait for, only when it is the server's first (it has never
   * run, and the turn would otherwise go without its tools for no reason); a server in
   * back-off whose delay has passed is started again without waiting: one that hangs at
   * start must not hold up every turn for the start timeout.
   */
  const firstStart = (slot: Slot): Promise<void> | undefined => {
    if (slot.state === "starting") return slot.restarts === 0 ? slot.starting : undefined;
    const starting = ensureStarted(slot);
    return slot.restarts === 0 ? starting : undefined;
  };

  /** The running servers' tools within LISTING_BUDGET, in server order; a server with tools left out says so once. */
  const listing = (): Tool[] => {
    const listed: Tool[] = [];
    let bytes = 0;
    let full: string | undefined;
    for (const slot of slots) {
      const tools =
        slot.state === "running"
          ? slot.tools
          : slot.state === "backoff" || slot.state === "starting"
            ? slot.lastTools
            : undefined;
      if (!tools) continue;
      let leftOut = 0;
      let why = full;
      for (const entry of tools.values()) {
        why ??=
          listed.length >= LISTING_BUDGET.tools
            ? `the agent's list already has ${LISTING_BUDGET.tools} MCP tools, the most one listing offers`
            : bytes + entry.bytes > LISTING_BUDGET.bytes
              ? `their schemas and descriptions would take the agent's MCP tools past ${LISTING_BUDGET.bytes / 1024 / 1024} MiB, the most one listing offers`
              : undefined;
        if (why !== undefined) {
          full = why;
          leftOut += 1;
          continue;
        }
        listed.push(entry.tool);
        bytes += entry.bytes;
      }
      if (leftOut > 0)
        warnOnce(
          slot,
          `MCP server ${slot.config.name}: ${leftOut} of its ${tools.size} tools left out of the agent's tool list: ${why}; servers listed earlier in agents.json keep theirs first`,
        );
    }
    return listed;
  };

  /** A warning about a server's tools, given once: the same one at every listing is not news. */
  const warnOnce = (slot: Slot, message: string) => {
    if (slot.warned.has(message)) return;
    slot.warned.add(message);
    log("warn", slot, {}, message);
  };

  const toolsOf = (slot: Slot, session: ServerSession, listed: readonly unknown[]) =>
    serverTools(
      slot.config.name,
      listed,
      (tool, args, signal) => callTool(slot, session, tool, args, signal),
      (message) => warnOnce(slot, message),
      hideFor(slot),
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
      // The parent's list is the agent's, not per server: every server hides all of them.
      const resolved = params.secrets ?? [];
      const previous = new Map(slots.map((slot) => [slot.config.name, slot]));
      slots = params.servers.map((config) => {
        const key = configKey(config);
        const kept = previous.get(config.name);
        if (kept && kept.key === key) {
          previous.delete(config.name);
          // What it hid before stays hidden: its stderr may still hold it.
          kept.secrets = secretsOf(config, [...kept.secrets, ...resolved]);
          return kept;
        }
        return newSlot(config, key, secretsOf(config, resolved));
      });
      for (const slot of previous.values()) retire(slot);
      if (stopped) for (const slot of slots) slot.state = "stopped";
    },

    async tools() {
      await Promise.all(slots.map((slot) => firstStart(slot) ?? Promise.resolve()));
      await Promise.all(slots.map((slot) => slot.refreshing ?? Promise.resolve()));
      return listing();
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

    status: () => {
      // Every tool is counted and named; descriptions stop at a budget so the answer fits its frame.
      let descriptionBytes = 0;
      const describe = (description: string) => {
        descriptionBytes += Buffer.byteLength(description);
        return descriptionBytes <= statusDescriptionBytes ? description : "";
      };
      return slots.map((slot) => ({
        name: slot.config.name,
        transport: slot.config.transport,
        state: slot.state,
        tools: [...slot.tools.values()].map(({ tool }) => ({
          name: tool.name,
          description: describe(tool.description),
        })),
        restarts: slot.restarts,
        ...(slot.lastError === undefined
          ? {}
          : { lastError: redact(slot.lastError, slot.secrets), lastErrorAt: slot.lastErrorAt }),
      }));
    },

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
        const listed = await session.ready;
        const tools = serverTools(server, listed, notCallable, () => undefined, hideFor(slot));
        return {
          ok: true,
          tools: [...tools.values()].map(({ tool }) => ({ name: tool.name, description: tool.description })),
          durationMs: elapsed(),
        };
      } catch (error) {
        return { ok: false, tools: [], error: redact((error as Error).message, slot.secrets), durationMs: elapsed() };
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

function newSlot(config: McpServerConfig, key: string, secrets: string[]): Slot {
  return {
    config,
    key,
    secrets,
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
