/**
 * The parent's handle on one agent's tools. Every call: waits for a concurrency slot
 * (bounded queue), gets a ready child from the supervisor, and has a deadline. Failures
 * come back as `ok: false` results, never as exceptions.
 *
 * Every call's audit row is recorded (`recordCall`) and committed before the caller gets
 * its result; a result whose row cannot be stored is withheld (an INTERNAL failure).
 *
 * Crash accounting (one user's request must never take the agent down for the others):
 * a crash with calls in flight is blamed on them, not counted toward the agent's restart
 * budget; a read-only call is retried once, alone on the new child, so a second crash is
 * unambiguously its own (read-only is the tool's own `readOnlyHint`, from tool.list); writes
 * and shell are never retried (they may have happened);
 * a call that crashed the child twice is refused for the rest of its session. "A call" is
 * its tool and the path it works on, not its exact arguments: a pattern respelled one
 * character at a time must not buy a new pair of crashes (issue 32, item 2).
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import {
  failure,
  mcpStatusMethod,
  mcpTestMethod,
  pingMethod,
  toolCallMethod,
  toolListMethod,
  type ParamsOf,
  type ResultOf,
  type ToolInfo,
  type ToolResult,
} from "../protocol.js";
import { Emitter } from "vscode-jsonrpc";
import type { RequestOptions } from "./child-connection.js";
import { Semaphore } from "./semaphore.js";
import { ToolhostError } from "./toolhost-error.js";
import type { ToolhostSupervisor } from "./toolhost-supervisor.js";

export type ToolCallRequest = {
  name: string;
  args: Record<string, unknown>;
  traceId?: string;
  cwd?: string;
  sessionId?: number;
  signal?: AbortSignal;
};

export type ToolCallAudit = {
  traceId?: string;
  agentId: string;
  sessionId?: number;
  tool: string;
  argsDigest: string;
  ok: boolean;
  errorCode?: string;
  durationMs: number;
};

export type { ToolInfo };

export type ToolhostClientOptions = {
  agentId: string;
  supervisor: ToolhostSupervisor;
  concurrency: number;
  queueMax: number;
  callTimeoutMs: number;
  /** Stop the child after this long without a call (it starts again on the next); 0 never. */
  idleStopMs?: number;
  /** Stores a call's audit row; the call's result waits for it (a rejection withholds the result). */
  recordCall?: (audit: ToolCallAudit) => Promise<void>;
  clock?: { now(): number };
};

/** A tool with its own deadline argument gets that deadline plus this margin, so the child reports TIMEOUT first. */
const DEADLINE_MARGIN_MS = 2_000;
/** A call that crashed the child this many times is refused for the rest of its session. */
const CRASHES_BEFORE_QUARANTINE = 2;

export class ToolhostClient {
  private readonly semaphore: Semaphore;
  private readonly clock: { now(): number };
  private toolsCache: { generation: number; tools: ToolInfo[] } | undefined;
  /** Calls sent to a child and not answered yet. */
  private sent = 0;
  private readonly idleWaiters: (() => void)[] = [];
  /** Set while a retry runs alone: other calls wait for it before they are sent. */
  private exclusive: Promise<void> | undefined;
  /** Crashes per call fingerprint (session, tool, path), and the child that crashed last. */
  private readonly crashes = new Map<string, { count: number; child: number | undefined }>();
  /** The child generation a crash error came from (set where the call was sent). */
  private readonly crashedChild = new WeakMap<object, number>();
  /** Calls between callTool's start and its answer (queued ones included). */
  private active = 0;
  private readonly activity = new Emitter<number>();

  constructor(private readonly options: ToolhostClientOptions) {
    this.semaphore = new Semaphore(options.concurrency, options.queueMax);
    this.clock = options.clock ?? { now: () => Date.now() };
    const { supervisor } = options;
    supervisor.blameCrashesOn(() => this.sent > 0);
    const idleStopMs = options.idleStopMs ?? 0;
    if (idleStopMs > 0) {
      // Every child that comes up is parked once it has served nothing for idleStopMs.
      supervisor.onDidChangeState(({ newState }) => {
        if (newState !== "running") return;
        const generation = supervisor.generation;
        void this.whenIdleFor(idleStopMs).then(() => {
          if (supervisor.generation === generation) void supervisor.park();
        });
      });
    }
  }

  /** Resolves once no call has been in progress for `ms` (calls that come and go restart the wait). */
  whenIdleFor(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          listener.dispose();
          resolve();
        }, ms);
        timer.unref();
      };
      const listener = this.activity.event((active) => (active === 0 ? arm() : clearTimeout(timer)));
      if (this.active === 0) arm();
    });
  }

  get agentId(): string {
    return this.options.agentId;
  }

  get supervisor(): ToolhostSupervisor {
    return this.options.supervisor;
  }

  get load(): { running: number; queued: number } {
    return { running: this.semaphore.running, queued: this.semaphore.queued };
  }

  async ping(timeoutMs = 5_000): Promise<ResultOf<typeof pingMethod>> {
    const connection = await this.options.supervisor.ready();
    return connection.request(pingMethod, {}, { timeoutMs });
  }

  /**
   * The child's tools; cached per child generation. `refresh` asks the child again (once
   * per turn): its MCP servers' tools come and go (`tools/list_changed`, a crash, a start).
   */
  async listTools(options: { refresh?: boolean } = {}): Promise<ToolInfo[]> {
    if (options.refresh) return this.fetchTools(true);
    return this.knownTools() ?? this.fetchTools();
  }

  /** The agent's MCP servers as the running child sees them; undefined while no child runs (none is started for this). */
  async mcpStatus(timeoutMs = 5_000): Promise<ResultOf<typeof mcpStatusMethod> | undefined> {
    const { supervisor } = this.options;
    if (supervisor.state !== "running") return undefined;
    const connection = await supervisor.ready();
    return connection.request(mcpStatusMethod, {}, { timeoutMs });
  }

  /** Starts one of the agent's MCP servers afresh, lists its tools and stops it (`laoding mcp test`). */
  async mcpTest(server: string, timeoutMs: number): Promise<ResultOf<typeof mcpTestMethod>> {
    const connection = await this.options.supervisor.ready();
    return connection.request(mcpTestMethod, { server }, { timeoutMs });
  }

  /** The running child's list when it is at hand: every call asks for its tool's hints, most without waiting. */
  private knownTools(): ToolInfo[] | undefined {
    const { supervisor } = this.options;
    return supervisor.state === "running" && this.toolsCache?.generation === supervisor.generation
      ? this.toolsCache.tools
      : undefined;
  }

  private async fetchTools(refresh = false): Promise<ToolInfo[]> {
    const connection = await this.options.supervisor.readyAfterRestart(this.options.callTimeoutMs);
    const generation = this.options.supervisor.generation;
    if (!refresh && this.toolsCache?.generation === generation) return this.toolsCache.tools;
    const { tools } = await connection.request(toolListMethod, {}, { timeoutMs: this.options.callTimeoutMs });
    this.toolsCache = { generation, tools };
    return tools;
  }

  async callTool(request: ToolCallRequest): Promise<ToolResult> {
    const started = this.clock.now();
    const argsDigest = digest(request.args);
    this.activity.fire((this.active += 1));
    let result: ToolResult;
    try {
      result = await this.callOnce(request);
    } finally {
      this.activity.fire((this.active -= 1));
    }
    if (!this.options.recordCall) return result;
    const audit: ToolCallAudit = {
      agentId: this.options.agentId,
      tool: request.name,
      argsDigest,
      ok: result.ok,
      durationMs: this.clock.now() - started,
    };
    if (request.traceId) audit.traceId = request.traceId;
    if (request.sessionId !== undefined) audit.sessionId = request.sessionId;
    if (!result.ok) audit.errorCode = result.error.code;
    try {
      await this.options.recordCall(audit);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return failure(
        "INTERNAL",
        request.name,
        `its audit record could not be stored (${reason}), so its result is withheld; the call may have run and had its effects: check before repeating it`,
      );
    }
    return result;
  }

  private async callOnce(request: ToolCallRequest): Promise<ToolResult> {
    let release: (() => void) | undefined;
    try {
      if (
        this.crashes.size > 0 &&
        (this.crashes.get(fingerprintOf(request))?.count ?? 0) >= CRASHES_BEFORE_QUARANTINE
      ) {
        return failure(
          "TOOLHOST_CRASHED",
          request.name,
          `this call crashed the toolhost twice; ${request.name}${typeof request.args.path === "string" ? " on this path" : ""} is not run again in this session, whatever its other arguments (start a new conversation to try again)`,
        );
      }
      release = this.semaphore.tryAcquire() ?? (await this.semaphore.acquire(request.signal));
      // The tool's own declaration decides its deadline and whether a crash may be retried.
      const info = (this.knownTools() ?? (await this.fetchTools())).find((tool) => tool.name === request.name);
      const params: ParamsOf<typeof toolCallMethod> = { name: request.name, args: request.args };
      if (request.traceId) params.traceId = request.traceId;
      if (request.cwd) params.cwd = request.cwd;
      const timeoutMs = this.deadlineFor(info, request.args);
      const options: RequestOptions = { timeoutMs };
      if (request.signal) options.signal = request.signal;
      try {
        return await this.send(params, options, timeoutMs);
      } catch (error) {
        if (!(error instanceof ToolhostError) || error.code !== "TOOLHOST_CRASHED") throw error;
        const fingerprint = fingerprintOf(request);
        const crashes = this.countCrash(fingerprint, error);
        if (info?.annotations.readOnlyHint !== true || crashes >= CRASHES_BEFORE_QUARANTINE) throw error;
        // A read cannot have changed anything: once more on the restarted child, alone, so
        // that a second crash is its own and never takes another call down with it.
        try {
          return await this.alone(() => this.send(params, options, timeoutMs, true));
        } catch (retryError) {
          if (retryError instanceof ToolhostError && retryError.code === "TOOLHOST_CRASHED")
            this.countCrash(fingerprint, retryError);
          throw retryError;
        }
      }
    } catch (error) {
      if (error instanceof ToolhostError) return failure(error.code, request.name, error.message);
      return failure("INTERNAL", request.name, (error as Error).message);
    } finally {
      release?.();
    }
  }

  /**
   * Counts a crash against a fingerprint, once per child: two calls on the same path in
   * flight when one child died are one crash, not the two that quarantine them.
   */
  private countCrash(fingerprint: string, error: ToolhostError): number {
    const child = this.crashedChild.get(error);
    const known = this.crashes.get(fingerprint);
    if (known && child !== undefined && known.child === child) return known.count;
    const count = (known?.count ?? 0) + 1;
    this.crashes.set(fingerprint, { count, child });
    return count;
  }

  /** Sends one call to a ready child (a call during a back-off waits for the restart, within its deadline). */
  private async send(
    params: ParamsOf<typeof toolCallMethod>,
    options: RequestOptions,
    timeoutMs: number,
    isAlone = false,
  ): Promise<ToolResult> {
    if (!isAlone) while (this.exclusive) await this.exclusive;
    const connection = this.options.supervisor.live ?? (await this.options.supervisor.readyAfterRestart(timeoutMs));
    const child = this.options.supervisor.generation;
    this.sent += 1;
    try {
      return await connection.request(toolCallMethod, params, options);
    } catch (error) {
      if (error instanceof ToolhostError) this.crashedChild.set(error, child);
      throw error;
    } finally {
      this.sent -= 1;
      if (this.sent === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Runs `work` once nothing else is in flight, holding other calls back until it is done. */
  private async alone<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive;
    let done!: () => void;
    this.exclusive = new Promise((resolve) => (done = resolve));
    try {
      if (this.sent > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      return await work();
    } finally {
      this.exclusive = undefined;
      done();
    }
  }

  private deadlineFor(info: ToolInfo | undefined, args: Record<string, unknown>): number {
    const deadline = info?.deadline;
    if (!deadline) return this.options.callTimeoutMs;
    const asked = args[deadline.argument];
    const wanted = typeof asked === "number" && asked > 0 ? asked : deadline.defaultMs;
    return Math.max(this.options.callTimeoutMs, Math.min(wanted, deadline.maxMs) + DEADLINE_MARGIN_MS);
  }
}

/**
 * What identifies a call for crash accounting: its session (or folder), its tool, and the
 * path it works on, normalised against the folder (`big.txt`, `./big.txt` and
 * `sub/../big.txt` are one; no path is the folder itself, as grep and glob take it). The
 * other arguments (a pattern, a command) can be respelled endlessly, so they are left out.
 */
function fingerprintOf(request: ToolCallRequest): string {
  const path = request.args.path;
  const target = normalisedPath(typeof path === "string" ? path : ".", request.cwd);
  return `${request.sessionId ?? request.cwd ?? ""}\0${request.name}\0${target}`;
}

function normalisedPath(path: string, cwd: string | undefined): string {
  const absolute = posix.isAbsolute(path) ? path : posix.join(cwd ?? ".", path);
  return posix.normalize(absolute).replace(/(.)\/+$/, "$1");
}

/** A digest of the arguments for the audit trail: proves what was called without storing it. */
export function digest(args: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(args) ?? "")
    .digest("hex")
    .slice(0, 16);
}
