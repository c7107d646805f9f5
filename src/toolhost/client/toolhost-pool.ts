/**
 * One toolhost client per agent, started on first use. `stopAll` stops every child
 * gracefully (SIGTERM, then SIGKILL after the grace period) without restarting any.
 */
import type { ChildProcess } from "node:child_process";
import type { Logger } from "pino";
import type { ChildConnection } from "./child-connection.js";
import { ToolhostClient, type AuditTrail } from "./toolhost-client.js";
import { ToolhostSupervisor } from "./toolhost-supervisor.js";

export type ToolhostSettings = {
  callTimeoutMs: number;
  heartbeatMs: number;
  restartLimit: number;
  restartWindowMs: number;
  concurrency: number;
  queueMax: number;
  maxFrameBytes: number;
  startTimeoutMs: number;
  stopGraceMs: number;
  /** A child with no call for this long is stopped and starts again on the next; 0 never. */
  idleStopMs?: number;
};

export type ToolhostPoolOptions = {
  settings: ToolhostSettings;
  spawn: (agentId: string) => ChildProcess;
  logger: Logger;
  /** Where every call's write-ahead row goes (toolhost-client.ts). */
  audit?: AuditTrail;
  /** Redacts the audited arguments (the configured secrets). */
  redact?: (text: string) => string;
  /** Sent to each new child of the agent before its first call (supervisor's `initialize`). */
  initialize?: (agentId: string, connection: ChildConnection) => Promise<void>;
};

export const DEFAULT_START_TIMEOUT_MS = 15_000;
export const DEFAULT_STOP_GRACE_MS = 3_000;

/** A retired client is stopped once it has had no call for this long (a turn in progress may still use it). */
export const RETIRE_IDLE_MS = 30_000;

export class ToolhostPool {
  private readonly clients = new Map<string, ToolhostClient>();
  private readonly retired = new Set<ToolhostClient>();
  private stopped = false;

  constructor(private readonly options: ToolhostPoolOptions) {}

  client(agentId: string): ToolhostClient {
    if (this.stopped) throw new Error("the toolhost pool is stopped");
    let client = this.clients.get(agentId);
    if (!client) {
      const { settings } = this.options;
      const logger = this.options.logger.child({ agentId, component: "toolhost-client" });
      const supervisor = new ToolhostSupervisor({
        agentId,
        spawn: () => this.options.spawn(agentId),
        maxFrameBytes: settings.maxFrameBytes,
        heartbeatMs: settings.heartbeatMs,
        startTimeoutMs: settings.startTimeoutMs,
        stopGraceMs: settings.stopGraceMs,
        restart: {
          maxCrashes: settings.restartLimit,
          windowMs: settings.restartWindowMs,
          baseDelayMs: 100,
          maxDelayMs: 10_000,
          coolDownMs: settings.restartWindowMs,
        },
        logger,
        ...(this.options.initialize
          ? {
              initialize: (connection: ChildConnection) =>
                this.options.initialize?.(agentId, connection) ?? Promise.resolve(),
            }
          : {}),
      });
      client = new ToolhostClient({
        agentId,
        supervisor,
        concurrency: settings.concurrency,
        queueMax: settings.queueMax,
        callTimeoutMs: settings.callTimeoutMs,
        ...(settings.idleStopMs ? { idleStopMs: settings.idleStopMs } : {}),
        ...(this.options.audit ? { audit: this.options.audit } : {}),
        ...(this.options.redact ? { redact: this.options.redact } : {}),
      });
      this.clients.set(agentId, client);
    }
    return client;
  }

  /**
   * Replaces an agent's client: the next `client()` starts a new child (with the launch as
   * it is then), and the old one is stopped once it has been idle for RETIRE_IDLE_MS, so a
   * turn in progress finishes its calls on it.
   */
  retire(agentId: string, idleMs = RETIRE_IDLE_MS): void {
    const client = this.clients.get(agentId);
    if (!client) return;
    this.clients.delete(agentId);
    this.retired.add(client);
    void client.whenIdleFor(idleMs).then(() => client.supervisor.stop().finally(() => this.retired.delete(client)));
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.clients.values(), ...this.retired].map((client) => client.supervisor.stop()));
  }
}
