/**
 * The parent's handle on one agent's tools. Every call: waits for a concurrency slot
 * (bounded queue), gets a ready child from the supervisor, and has a deadline. Read-only
 * tools are retried once on a fresh child after a crash; writes and shell never are
 * (they may have happened). Every call is reported to `onCall` for the audit trail.
 * Failures come back as `ok: false` results, never as exceptions.
 */
import { createHash } from "node:crypto";
import { READ_ONLY_TOOLS, failure, pingMethod, toolCallMethod, toolListMethod, type ResultOf, type ToolResult } from "../protocol.js";
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

export type ToolInfo = ResultOf<typeof toolListMethod>["tools"][number];

export type ToolhostClientOptions = {
  agentId: string;
  supervisor: ToolhostSupervisor;
  concurrency: number;
  queueMax: number;
  callTimeoutMs: number;
  /** shell.exec gets its own timeout plus this margin, so the child reports TIMEOUT first. */
  shellTimeoutMs: number;
  shellMaxTimeoutMs: number;
  onCall?: (audit: ToolCallAudit) => void;
  clock?: { now(): number };
};

const SHELL_DEADLINE_MARGIN_MS = 2_000;

export class ToolhostClient {
  private readonly semaphore: Semaphore;
  private readonly clock: { now(): number };
  private toolsCache: { generation: number; tools: ToolInfo[] } | undefined;

  constructor(private readonly options: ToolhostClientOptions) {
    this.semaphore = new Semaphore(options.concurrency, options.queueMax);
    this.clock = options.clock ?? { now: () => Date.now() };
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

  /** The child's tools; cached per child generation. */
  async listTools(): Promise<ToolInfo[]> {
    const connection = await this.options.supervisor.readyAfterRestart(this.options.callTimeoutMs);
    const generation = this.options.supervisor.generation;
    if (this.toolsCache?.generation === generation) return this.toolsCache.tools;
    const { tools } = await connection.request(toolListMethod, {}, { timeoutMs: this.options.callTimeoutMs });
    this.toolsCache = { generation, tools };
    return tools;
  }

  async callTool(request: ToolCallRequest): Promise<ToolResult> {
    const started = this.clock.now();
    const result = await this.callOnce(request);
    this.options.onCall?.({
      ...(request.traceId ? { traceId: request.traceId } : {}),
      ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
      agentId: this.options.agentId,
      tool: request.name,
      argsDigest: digest(request.args),
      ok: result.ok,
      ...(result.ok ? {} : { errorCode: result.error.code }),
      durationMs: this.clock.now() - started,
    });
    return result;
  }

  private async callOnce(request: ToolCallRequest): Promise<ToolResult> {
    let release: (() => void) | undefined;
    try {
      release = await this.semaphore.acquire(request.signal);
      const params = {
        name: request.name,
        args: request.args,
        ...(request.traceId ? { traceId: request.traceId } : {}),
        ...(request.cwd ? { cwd: request.cwd } : {}),
      };
      const timeoutMs = this.deadlineFor(request);
      const options = { timeoutMs, ...(request.signal ? { signal: request.signal } : {}) };
      try {
        // A call that arrives during a back-off waits for the restart (within its deadline).
        const connection = await this.options.supervisor.readyAfterRestart(timeoutMs);
        return await connection.request(toolCallMethod, params, options);
      } catch (error) {
        if (!(error instanceof ToolhostError) || error.code !== "TOOLHOST_CRASHED" || !READ_ONLY_TOOLS.has(request.name)) throw error;
        // A read cannot have changed anything: try once more on the restarted child.
        const connection = await this.options.supervisor.readyAfterRestart(timeoutMs);
        return await connection.request(toolCallMethod, params, options);
      }
    } catch (error) {
      if (error instanceof ToolhostError) return failure(error.code, request.name, error.message);
      return failure("INTERNAL", request.name, (error as Error).message);
    } finally {
      release?.();
    }
  }

  private deadlineFor(request: ToolCallRequest): number {
    if (request.name !== "shell.exec") return this.options.callTimeoutMs;
    const asked = typeof request.args.timeout_ms === "number" ? request.args.timeout_ms : this.options.shellTimeoutMs;
    return Math.max(this.options.callTimeoutMs, Math.min(asked, this.options.shellMaxTimeoutMs) + SHELL_DEADLINE_MARGIN_MS);
  }
}

/** A digest of the arguments for the audit trail: proves what was called without storing it. */
export function digest(args: unknown): string {
  return createHash("sha256").update(JSON.stringify(args) ?? "").digest("hex").slice(0, 16);
}
