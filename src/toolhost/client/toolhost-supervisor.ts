/**
 * Keeps one agent's toolhost child running. States:
 *   idle -> starting -> running -> (crash) -> backoff -> starting ...
 *                                 (too many crashes) -> failed -> (cool-down, next use) -> starting
 *   any -> stopping -> stopped    (an intentional stop never restarts)
 * A new child must answer `ping` before calls go to it (readiness gating). Heartbeat
 * pings bypass the call semaphore; two missed in a row count as a hang and the child is
 * killed, which is handled as a crash.
 */
import type { ChildProcess } from "node:child_process";
import type { Logger } from "pino";
import { pingMethod } from "../protocol.js";
import { ChildConnection, type ExitInfo } from "./child-connection.js";
import { RestartPolicy, type RestartPolicyOptions } from "./restart-policy.js";
import { ToolhostError } from "./toolhost-error.js";

export type SupervisorState = "idle" | "starting" | "running" | "backoff" | "failed" | "stopping" | "stopped";

export type SupervisorOptions = {
  agentId: string;
  spawn: () => ChildProcess;
  maxFrameBytes: number;
  heartbeatMs: number;
  /** How long a new child may take to answer its first ping. */
  startTimeoutMs: number;
  stopGraceMs: number;
  restart: RestartPolicyOptions;
  logger: Logger;
  clock?: { now(): number };
};

const MISSED_HEARTBEATS_LIMIT = 2;

export class ToolhostSupervisor {
  private stateValue: SupervisorState = "idle";
  private current: ChildConnection | undefined;
  private starting: Promise<ChildConnection> | undefined;
  private backoffTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private failedUntil = 0;
  private lastFailure = "";
  private missedHeartbeats = 0;
  private generationValue = 0;
  private blame: () => boolean = () => false;
  private readonly policy: RestartPolicy;
  private readonly clock: { now(): number };

  constructor(private readonly options: SupervisorOptions) {
    this.policy = new RestartPolicy(options.restart);
    this.clock = options.clock ?? { now: () => Date.now() };
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  /** Increases with every child started: a retry after a restart goes to a new generation. */
  get generation(): number {
    return this.generationValue;
  }

  get pid(): number | undefined {
    return this.current?.pid;
  }

  /** A child that answered ping, starting one when needed; rejects TOOLHOST_UNAVAILABLE while down. */
  ready(): Promise<ChildConnection> {
    switch (this.stateValue) {
      case "running":
        if (this.current?.alive) return Promise.resolve(this.current);
        return this.unavailable("the toolhost is restarting");
      case "starting":
        return this.starting ?? this.unavailable("the toolhost is starting");
      case "backoff":
        return this.unavailable(`the toolhost crashed (${this.lastFailure}) and restarts shortly`);
      case "failed":
        if (this.clock.now() < this.failedUntil) {
          return this.unavailable(`the toolhost crashed ${this.policy.recentCrashes} times recently (${this.lastFailure}); next try in ${Math.ceil((this.failedUntil - this.clock.now()) / 1000)} s`);
        }
        this.options.logger.info("toolhost cool-down over: probing with one start");
        return this.start();
      case "idle":
        return this.start();
      case "stopping":
      case "stopped":
        return this.unavailable("the toolhost is stopped");
    }
  }

  /** Tells the supervisor how to know whether a call in flight can be blamed for a crash. */
  blameCrashesOn(check: () => boolean): void {
    this.blame = check;
  }

  /** Waits until a child is running again (or gives up): used to retry a read after a restart. */
  async readyAfterRestart(timeoutMs: number): Promise<ChildConnection> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      // A child that died but whose exit is still being processed (its last answers read)
      // is as good as in back-off: the restart is coming.
      const restarting = this.stateValue === "backoff" || (this.stateValue === "running" && !this.current?.alive);
      if (!restarting || this.clock.now() >= deadline) return this.ready();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Graceful stop: SIGTERM, SIGKILL after the grace period. Idempotent; never restarts. */
  async stop(): Promise<void> {
    if (this.stateValue === "stopped") return;
    this.stateValue = "stopping";
    clearTimeout(this.backoffTimer);
    this.stopHeartbeat();
    const connection = this.current ?? (await this.starting?.catch(() => undefined));
    if (connection) {
      connection.kill("SIGTERM");
      const grace = setTimeout(() => connection.kill("SIGKILL"), this.options.stopGraceMs);
      await connection.exited;
      clearTimeout(grace);
    }
    this.current = undefined;
    this.stateValue = "stopped";
  }

  private unavailable(reason: string): Promise<never> {
    return Promise.reject(new ToolhostError("TOOLHOST_UNAVAILABLE", reason));
  }

  private start(): Promise<ChildConnection> {
    this.stateValue = "starting";
    this.generationValue += 1;
    const attempt = this.launch();
    this.starting = attempt;
    attempt.then(
      (connection) => {
        if (this.starting !== attempt) return;
        this.starting = undefined;
        if (this.stateValue !== "starting") return;
        this.current = connection;
        this.stateValue = "running";
        this.missedHeartbeats = 0;
        this.startHeartbeat(connection);
        connection.onExit((info) => this.onChildExit(connection, info));
      },
      (error: Error) => {
        if (this.starting !== attempt) return;
        this.starting = undefined;
        this.onCrash(error.message);
      },
    );
    return attempt;
  }

  private async launch(): Promise<ChildConnection> {
    let child: ChildProcess;
    try {
      child = this.options.spawn();
    } catch (error) {
      throw new ToolhostError("TOOLHOST_UNAVAILABLE", `cannot start the toolhost: ${(error as Error).message}`);
    }
    // A spawn failure arrives as an 'error' event: handled here, never unhandled.
    const spawnError = new Promise<never>((_, reject) =>
      child.once("error", (error) => reject(new ToolhostError("TOOLHOST_UNAVAILABLE", `cannot start the toolhost: ${error.message}`))),
    );
    spawnError.catch(() => undefined);
    // A child spawned with a piped stderr (fixtures) must not block on a full pipe.
    child.stderr?.on("data", () => undefined);
    const connection = new ChildConnection(child, {
      maxFrameBytes: this.options.maxFrameBytes,
      onLog: (level, message) => this.options.logger[level]({ agentId: this.options.agentId }, message),
    });
    try {
      const info = await Promise.race([connection.request(pingMethod, {}, { timeoutMs: this.options.startTimeoutMs }), spawnError]);
      this.options.logger.info({ childPid: info.pid, sandbox: info.sandbox }, "toolhost started");
      return connection;
    } catch (error) {
      connection.kill("SIGKILL");
      await Promise.race([connection.exited, new Promise((resolve) => setTimeout(resolve, this.options.stopGraceMs))]);
      const reason = error instanceof ToolhostError ? error.message : String(error);
      throw new ToolhostError("TOOLHOST_UNAVAILABLE", `the toolhost did not start: ${reason}`);
    }
  }

  private onChildExit(connection: ChildConnection, info: ExitInfo): void {
    if (this.current !== connection) return;
    this.current = undefined;
    this.stopHeartbeat();
    if (this.stateValue === "stopping" || this.stateValue === "stopped") return;
    this.onCrash(info.reason);
  }

  private onCrash(reason: string): void {
    if (this.stateValue === "stopping" || this.stateValue === "stopped") return;
    this.lastFailure = reason;
    // A crash with calls in flight is theirs: it never counts toward the agent's budget.
    const blamed = this.blame();
    const decision = blamed ? this.policy.onBlamedCrash(this.clock.now()) : this.policy.onCrash(this.clock.now());
    if (decision.action === "give-up") {
      this.stateValue = "failed";
      this.failedUntil = this.clock.now() + decision.retryAfterMs;
      this.options.logger.error({ reason, crashes: this.policy.recentCrashes, retryAfterMs: decision.retryAfterMs }, "toolhost keeps crashing; calls fail until the cool-down ends");
      return;
    }
    this.stateValue = "backoff";
    this.options.logger.warn({ reason, delayMs: decision.delayMs, blamedOnCall: blamed }, "toolhost crashed; restarting");
    this.backoffTimer = setTimeout(() => {
      if (this.stateValue === "backoff") this.start().catch(() => undefined);
    }, decision.delayMs);
  }

  private startHeartbeat(connection: ChildConnection): void {
    this.stopHeartbeat();
    this.heartbeatTimer = setInterval(() => {
      connection.request(pingMethod, {}, { timeoutMs: this.options.heartbeatMs }).then(
        (info) => {
          this.missedHeartbeats = 0;
          // A child that stays healthy earns a clean slate.
          if (info.uptimeMs > this.options.restart.windowMs) this.policy.reset();
        },
        () => {
          if (!connection.alive || this.current !== connection) return;
          this.missedHeartbeats += 1;
          if (this.missedHeartbeats >= MISSED_HEARTBEATS_LIMIT) {
            this.options.logger.error({ missed: this.missedHeartbeats }, "toolhost stopped answering heartbeats; killing it");
            connection.kill("SIGKILL");
          }
        },
      );
    }, this.options.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }
}
