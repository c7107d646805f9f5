/**
 * One toolhost client per agent, started on first use. `stopAll` stops every child
 * gracefully (SIGTERM, then SIGKILL after the grace period) without restarting any.
 */
import type { ChildProcess } from "node:child_process";
import type { Logger } from "pino";
import { ToolhostClient, type ToolCallAudit } from "./toolhost-client.js";
import { ToolhostSupervisor } from "./toolhost-supervisor.js";

export type ToolhostSettings = {
  callTimeoutMs: number;
  shellTimeoutMs: number;
  shellMaxTimeoutMs: number;
  heartbeatMs: number;
  restartLimit: number;
  restartWindowMs: number;
  concurrency: number;
  queueMax: number;
  maxFrameBytes: number;
  startTimeoutMs: number;
  stopGraceMs: number;
};

export type ToolhostPoolOptions = {
  settings: ToolhostSettings;
  spawn: (agentId: string) => ChildProcess;
  logger: Logger;
  onCall?: (audit: ToolCallAudit) => void;
};

export const DEFAULT_START_TIMEOUT_MS = 15_000;
export const DEFAULT_STOP_GRACE_MS = 3_000;

export class ToolhostPool {
  private readonly clients = new Map<string, ToolhostClient>();
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
      });
      client = new ToolhostClient({
        agentId,
        supervisor,
        concurrency: settings.concurrency,
        queueMax: settings.queueMax,
        callTimeoutMs: settings.callTimeoutMs,
        shellTimeoutMs: settings.shellTimeoutMs,
        shellMaxTimeoutMs: settings.shellMaxTimeoutMs,
        ...(this.options.onCall ? { onCall: this.options.onCall } : {}),
      });
      this.clients.set(agentId, client);
    }
    return client;
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.clients.values()].map((client) => client.supervisor.stop()));
  }
}
