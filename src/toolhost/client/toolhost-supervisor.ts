/**
 * Keeps one agent's toolhost child running. States:
 *   idle -> starting -> running -> (crash) -> backoff -> starting ...
 *                                 (too many crashes) -> failed -> (cool-down, next use) -> starting
 *   any -> stopping -> stopped    (an intentional stop never restarts)
 *   running -> parking -> idle    (no traffic for a while: the next use starts a child again)
 * Every change is an event (`onDidChangeState`, as in vscode-languageclient): callers wait
 * for a state instead of polling for it.
 * A new child must answer `ping` before calls go to it (readiness gating). Heartbeat
 * pings bypass the call semaphore; two missed in a row count as a hang and the child is
 * killed, which is handled as a crash.
 */
import type { ChildProcess } from "node:child_process";
import type { Logger } from "pino";
import { Emitter, type Event } from "vscode-jsonrpc";
import { pingMethod } from "../protocol.js";
import { ChildConnection, type ExitInfo } from "./child-connection.js";
import { RestartPolicy, type RestartPolicyOptions } from "./restart-policy.js";
import { ToolhostError } from "./toolhost-error.js";

export type SupervisorState =
  | "idle"
  | "starting"
  | "running"
  | "backoff"
  | "failed"
  | "parking"
  | "stopping"
  | "stopped";

export type StateChange = { oldState: SupervisorState; newState: SupervisorState };

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
  /**
   * Runs on every new child after its first ping, before any call reaches it: the agent's
   * MCP servers are sent here (`mcp.configure`), so a restarted child has them too. A
   * failure fails the start like a missed ping.
   */
  initialize?: (connection: ChildConnection) => Promise<void>;
  clock?: { now(): number };
};

const MISSED_HEARTBEATS_LIMIT = 2;

export class ToolhostSupervisor {
  private stateNow: SupervisorState = "idle";
  private readonly stateChanges = new Emitter<StateChange>();
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
    return this.stateNow;
  }

  /** Fires on every state change, after it happened. */
  get onDidChangeState(): Event<StateChange> {
    return this.stateChanges.event;
  }

  private get stateValue(): SupervisorState {
    return this.stateNow;
  }

  private set stateValue(newState: SupervisorState) {
    const oldState = this.stateNow;
    if (oldState === newState) return;
    this.stateNow = newState;
    this.stateChanges.fire({ oldState, newState });
  }

  /** Resolves with the state once `accept` holds (now or at a later change), or undefined after `timeoutMs`. */
  whenState(accept: (state: SupervisorState) => boolean, timeoutMs: number): Promise<SupervisorState | undefined> {
    if (accept(this.stateNow)) return Promise.resolve(this.stateNow);
    return new Promise((resolve) => {
      const finish = (state: SupervisorState | undefined) => {
        clearTimeout(timer);
        listener.dispose();
        resolve(state);
      };
      const listener = this.onDidChangeState(({ newState }) => accept(newState) && finish(newState));
      const timer = setTimeout(() => finish(undefined), timeoutMs);
    });
  }

  /** Increases with every child started: a retry after a restart goes to a new generation. */
  get generation(): number {
    return this.generationValue;
  }

  get pid(): number | undefined {
    return this.current?.pid;
  }

  /** The running child, when a call can be sent to it now (no start, restart or exit under way). */
  get live(): ChildConnection | undefined {
    return this.stateValue === "running" && this.current?.alive ? this.current : undefined;
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
          return this.unavailable(
            `the toolhost crashed ${this.policy.recentCrashes} times recently (${this.lastFailure}); next try in ${Math.ceil((this.failedUntil - this.clock.now()) / 1000)} s`,
          );
        }
        this.options.logger.info("toolhost cool-down over: probing with one start");
        return this.start();
      case "idle":
        return this.start();
      case "parking":
        // The idle child is on its way out: the next one starts once it is gone.
        return this.whenState((state) => state !== "parking", this.options.stopGraceMs + 1_000).then(() =>
          this.ready(),
        );
      case "stopping":
      case "stopped":
        return this.unavailable("the toolhost is stopped");
    }
  }

  /**
   * Stops an idle child to give its memory back (TOOLHOST_IDLE_STOP_MS); unlike `stop`,
   * the supervisor stays usable and the next call starts a new child. Only a running
   * child is parked.
   */
  async park(): Promise<void> {
    const connection = this.current;
    if (this.stateValue !== "running" || !connection) return;
    this.stateValue = "parking";
    this.stopHeartbeat();
    await this.terminate(connection);
    if (this.current === connection) this.current = undefined;
    if (this.stateValue === "parking") this.stateValue = "idle";
    this.options.logger.info("toolhost stopped after being idle; the next call starts it again");
  }

  /** Tells the supervisor how to know whether a call in flight can be blamed for a crash. */
  blameCrashesOn(check: () => boolean): void {
    this.blame = check;
  }

  /** Waits until a child is running again (or gives up): used to retry a read after a restart. */
  async readyAfterRestart(timeoutMs: number): Promise<ChildConnection> {
    // A child that died but whose exit is still being processed (its last answers read)
    // is as good as in back-off: the restart is coming.
    const dying = this.stateValue === "running" && !this.current?.alive;
    if (this.stateValue === "backoff" || dying) {
      const deadline = this.clock.now() + timeoutMs;
      // Out of "running" first (the exit is handled), then out of back-off (the new child starts).
      if (dying) await this.whenState((state) => state !== "running", timeoutMs);
      await this.whenState((state) => state !== "backoff", Math.max(0, deadline - this.clock.now()));
    }
    return this.ready();
  }

  /** Graceful stop: SIGTERM, SIGKILL after the grace period. Idempotent; never restarts. */
  async stop(): Promise<void> {
    if (this.stateValue === "stopped") return;
    this.stateValue = "stopping";
    clearTimeout(this.backoffTimer);
    this.stopHeartbeat();
    const connection = this.current ?? (await this.starting?.catch(() => undefined));
    if (connection) await this.terminate(connection);
    this.current = undefined;
    this.stateValue = "stopped";
  }

  /** SIGTERM, then SIGKILL after the grace period; resolves once the child is gone. */
  private async terminate(connection: ChildConnection): Promise<void> {
    connection.kill("SIGTERM");
    const grace = setTimeout(() => connection.kill("SIGKILL"), this.options.stopGraceMs);
    await connection.exited;
    clearTimeout(grace);
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
      child.once("error", (error) =>
        reject(new ToolhostError("TOOLHOST_UNAVAILABLE", `cannot start the toolhost: ${error.message}`)),
      ),
    );
    spawnError.catch(() => undefined);
    // A child spawned with a piped stderr (fixtures) must not block on a full pipe.
    child.stderr?.on("data", () => undefined);
    const connection = new ChildConnection(child, {
      maxFrameBytes: this.options.maxFrameBytes,
      onLog: (level, message) => this.options.logger[level]({ agentId: this.options.agentId }, message),
    });
    try {
      const info = await Promise.race([
        connection.request(pingMethod, {}, { timeoutMs: this.options.startTimeoutMs }),
        spawnError,
      ]);
      if (this.options.initialize) await Promise.race([this.options.initialize(connection), spawnError]);
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
    if (this.stateValue === "stopping" || this.stateValue === "stopped" || this.stateValue === "parking") return;
    this.onCrash(info.reason);
  }

  private onCrash(reason: string): void {
    if (this.stateValue === "stopping" || this.stateValue === "stopped" || this.stateValue === "parking") return;
    this.lastFailure = reason;
    // A crash with calls in flight is theirs: it never counts toward the agent's budget.
    const blamed = this.blame();
    const decision = blamed ? this.policy.onBlamedCrash(this.clock.now()) : this.policy.onCrash(this.clock.now());
    if (decision.action === "give-up") {
      this.stateValue = "failed";
      this.failedUntil = this.clock.now() + decision.retryAfterMs;
      this.options.logger.error(
        { reason, crashes: this.policy.recentCrashes, retryAfterMs: decision.retryAfterMs },
        "toolhost keeps crashing; calls fail until the cool-down ends",
      );
      return;
    }
    this.stateValue = "backoff";
    this.options.logger.warn(
      { reason, delayMs: decision.delayMs, blamedOnCall: blamed },
      "toolhost crashed; restarting",
    );
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
            this.options.logger.error(
              { missed: this.missedHeartbeats },
              "toolhost stopped answering heartbeats; killing it",
            );
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
