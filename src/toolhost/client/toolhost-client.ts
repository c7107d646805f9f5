/**
 * The parent's handle on one agent's tools. Every call: waits for a concurrency slot
 * (bounded queue), gets a ready child from the supervisor, and has a deadline. Failures
 * come back as `ok: false` results, never as exceptions.
 *
 * The audit is written ahead (issue 29): a call's intent row is committed before the call
 * can have an effect, and the caller gets the result only once it is; the outcome follows
 * in a later group commit. A call that may have effects (a write, a command, the network,
 * an MCP server's tool: anything its tool does not declare a read of the agent's own
 * folders) is sent only once its intent row is committed; a refused row means it is never
 * sent, and the caller is told so. A read changes nothing, so it is sent first and its row
 * committed while it travels and the child serves it (at concurrency 1 the commit
 * overlaps the child's work instead of following it); its result waits for that commit,
 * and a refused row withholds it.
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
import { createRedactor } from "../../log/redact.js";
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

/** What a call is: its write-ahead row, stored before it may have an effect. */
export type ToolCallIntent = {
  traceId?: string;
  agentId: string;
  sessionId?: number;
  tool: string;
  argsDigest: string;
  /** The arguments as JSON, redacted and shortened (AUDIT_ARGS_MAX_CHARS; long strings cut). */
  args?: string;
};

/** How a call ended: written in a later group commit than its intent. */
export type ToolCallOutcome = {
  ok: boolean;
  errorCode?: string;
  durationMs: number;
  /** The bytes of the output the caller got. */
  bytes?: number;
};

/** A call known whole: its intent and its outcome. */
export type ToolCallAudit = ToolCallIntent & ToolCallOutcome;

/** One call's row in the audit trail. */
export type AuditEntry = {
  /** Resolves once the intent row is committed; rejects with the database's refusal. */
  readonly committed: Promise<void>;
  /** Queues the outcome for a later commit (once; later calls are ignored). */
  finish(outcome: ToolCallOutcome): void;
};

/** Where calls are audited (the store's tool_calls; tests pass their own). */
export type AuditTrail = {
  /** Queues the intent row (with its outcome when the call never reached the child). */
  begin(intent: ToolCallIntent, outcome?: ToolCallOutcome): AuditEntry;
};

/** The outcome code of a call whose intent row the database refused (a call with effects was then never sent). */
export const AUDIT_REFUSED = "AUDIT_REFUSED";
/** The audited arguments' JSON is cut to this many characters. */
export const AUDIT_ARGS_MAX_CHARS = 2_000;
/** A string argument longer than this is cut to it in the audited arguments, with its length in bytes. */
const AUDIT_STRING_MAX_CHARS = 200;

export type { ToolInfo };

export type ToolhostClientOptions = {
  agentId: string;
  supervisor: ToolhostSupervisor;
  concurrency: number;
  queueMax: number;
  callTimeoutMs: number;
  /** Stop the child after this long without a call (it starts again on the next); 0 never. */
  idleStopMs?: number;
  /** The audit trail: a call's result waits for its intent row (a refusal withholds the result, or the call). */
  audit?: AuditTrail;
  /** Redacts the audited arguments' text (configured secrets and secret shapes); default: secret shapes only. */
  redact?: (text: string) => string;
  clock?: { now(): number };
};

/** A tool with its own deadline argument gets that deadline plus this margin, so the child reports TIMEOUT first. */
const DEADLINE_MARGIN_MS = 2_000;
/** A call that crashed the child this many times is refused for the rest of its session. */
const CRASHES_BEFORE_QUARANTINE = 2;

export class ToolhostClient {
  private readonly semaphore: Semaphore;
  private readonly clock: { now(): number };
  private readonly redact: (text: string) => string;
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
    this.redact = options.redact ?? createRedactor([]).redact;
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
    const audit = this.options.audit ? new CallAudit(this.options.audit, () => this.intentOf(request)) : undefined;
    this.activity.fire((this.active += 1));
    let result: ToolResult;
    try {
      result = await this.callOnce(request, audit);
    } finally {
      this.activity.fire((this.active -= 1));
    }
    if (!audit) return result;
    const durationMs = this.clock.now() - started;
    if (!audit.begun) {
      // Never reached the child (quarantined, queue full, no child): one row, outcome and
      // all. Refused or not, the failure itself hides nothing.
      audit.begin(outcomeOf(result, durationMs));
      await audit.committed.catch(() => undefined);
      return result;
    }
    let refusal: unknown;
    try {
      await audit.committed;
    } catch (error) {
      refusal = error ?? new Error("refused");
    }
    audit.finish(
      refusal === undefined ? outcomeOf(result, durationMs) : { ok: false, errorCode: AUDIT_REFUSED, durationMs },
    );
    // A call with effects whose row was refused was never sent: callOnce's failure says so.
    if (refusal === undefined || !audit.sent) return result;
    return failure(
      "INTERNAL",
      request.name,
      `its audit record could not be stored (${reasonOf(refusal)}), so its result is withheld; it only reads, so nothing was changed: check the bot's database (disk space, permissions) before trying again`,
    );
  }

  /** The call's write-ahead row: its digest once, its arguments redacted and shortened. */
  private intentOf(request: ToolCallRequest): ToolCallIntent {
    const json = JSON.stringify(request.args) ?? "";
    const intent: ToolCallIntent = {
      agentId: this.options.agentId,
      tool: request.name,
      argsDigest: digestOf(json),
      args: this.redact(auditArgs(request.args, json)),
    };
    if (request.traceId) intent.traceId = request.traceId;
    if (request.sessionId !== undefined) intent.sessionId = request.sessionId;
    return intent;
  }

  private async callOnce(request: ToolCallRequest, audit: CallAudit | undefined): Promise<ToolResult> {
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
      // The tool's own declaration decides its deadline, whether a crash may be retried and
      // whether it may be sent before its audit row is committed.
      const info = (this.knownTools() ?? (await this.fetchTools())).find((tool) => tool.name === request.name);
      const params: ParamsOf<typeof toolCallMethod> = { name: request.name, args: request.args };
      if (request.traceId) params.traceId = request.traceId;
      if (request.cwd) params.cwd = request.cwd;
      const timeoutMs = this.deadlineFor(info, request.args);
      const options: RequestOptions = { timeoutMs };
      if (request.signal) options.signal = request.signal;
      let answer: Promise<ToolResult>;
      if (!audit) answer = this.send(params, options, timeoutMs);
      else if (readsOnly(info)) {
        // Sent first: its row is committed while it travels (callTool waits for that commit).
        // The row is made on the next tick, after the writer's, which puts the request on
        // the pipe: its digest and redaction are not on the way to the child.
        answer = this.send(params, options, timeoutMs);
        audit.sent = true;
        process.nextTick(audit.beginNow);
      } else {
        // May have effects: sent only once its row is committed.
        audit.begin();
        try {
          await audit.committed;
        } catch (error) {
          return failure(
            "INTERNAL",
            request.name,
            `its audit record could not be stored (${reasonOf(error)}), so it was not run: nothing was done. It can be tried again once the bot's database can be written (the operator checks its disk space and permissions)`,
          );
        }
        audit.sent = true;
        answer = this.send(params, options, timeoutMs);
      }
      try {
        return await answer;
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
  return digestOf(JSON.stringify(args) ?? "");
}

function digestOf(json: string): string {
  return createHash("sha256").update(json).digest("hex").slice(0, 16);
}

/**
 * Whether a call may be sent before its audit row is committed: its tool declares that it
 * only reads the agent's own folders (`readOnlyHint`, no `openWorldHint`). The network
 * (web.fetch: a GET can have effects out there) and an MCP server's tools (whose hints are
 * the server's word, not ours) wait for their row, as does a tool the child did not list.
 */
export function readsOnly(info: ToolInfo | undefined): boolean {
  return (
    info !== undefined &&
    info.annotations.readOnlyHint &&
    !info.annotations.openWorldHint &&
    !info.name.startsWith("mcp.")
  );
}

/**
 * The arguments as the audit keeps them: their JSON, with every string longer than
 * AUDIT_STRING_MAX_CHARS cut (a file's content is kept as its start and its size), and
 * the whole cut to AUDIT_ARGS_MAX_CHARS. `json` is their JSON already made (for the digest).
 */
export function auditArgs(args: Record<string, unknown>, json: string): string {
  const text =
    json.length <= AUDIT_STRING_MAX_CHARS
      ? json
      : (JSON.stringify(args, (_key, value: unknown) =>
          typeof value === "string" && value.length > AUDIT_STRING_MAX_CHARS
            ? `${value.slice(0, AUDIT_STRING_MAX_CHARS)}… [${Buffer.byteLength(value)} bytes]`
            : value,
        ) ?? "");
  return text.length <= AUDIT_ARGS_MAX_CHARS ? text : `${text.slice(0, AUDIT_ARGS_MAX_CHARS)}… [cut]`;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What the audit keeps of a call's result. */
function outcomeOf(result: ToolResult, durationMs: number): ToolCallOutcome {
  if (result.ok) return { ok: true, durationMs, bytes: Buffer.byteLength(result.output) };
  const outcome: ToolCallOutcome = { ok: false, errorCode: result.error.code, durationMs };
  if (result.output !== undefined) outcome.bytes = Buffer.byteLength(result.output);
  return outcome;
}

/** One call's audit row as the client sees it: begun once (its intent made then), finished once. */
class CallAudit {
  private entry: AuditEntry | undefined;
  /** The call went to the child (or may have). */
  sent = false;

  constructor(
    private readonly trail: AuditTrail,
    private readonly intent: () => ToolCallIntent,
  ) {}

  get begun(): boolean {
    return this.entry !== undefined;
  }

  /** `begin` as a callback (no closure per call). */
  readonly beginNow = (): void => this.begin();

  begin(outcome?: ToolCallOutcome): void {
    if (this.entry) return;
    this.entry = this.trail.begin(this.intent(), outcome);
    // A read's refusal may come while its answer is awaited: not an unhandled rejection.
    this.entry.committed.catch(() => undefined);
  }

  get committed(): Promise<void> {
    return this.entry?.committed ?? Promise.resolve();
  }

  finish(outcome: ToolCallOutcome): void {
    this.entry?.finish(outcome);
  }
}
