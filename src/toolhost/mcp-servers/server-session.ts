/**
 * One run of one MCP server, from spawn (or connect) to its end, with the official SDK's
 * client and transports. It says why a run ended in one line a person can act on:
 * command not found, exit code or signal with the tail of its stderr, no answer in time,
 * garbage on stdout, an HTTP error. Secrets of the server's configuration never appear in
 * those lines: every one passes through the manager's `hide` (redact.ts).
 *
 * A session reports its end once: a start that fails rejects `ready`; a server that goes
 * away after it answered calls `onDown`. Closing it on purpose reports nothing.
 */
import { ChildProcess } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpServerConfig } from "../protocol.js";
import { isWithin } from "../sandbox/path-sandbox.js";
import { describeRemoteError, isMcpError } from "./call-result.js";
import { TextTail } from "./redact.js";

export type StdioServerConfig = Extract<McpServerConfig, { transport: "stdio" }>;

/** What to spawn for a stdio server: the sandboxed launch in production, the plain command in tests. */
export type StdioLaunch = { command: string; args: string[]; env: Record<string, string>; cwd: string };
/** Builds the launch of a stdio server whose `cwd` has been resolved (absolute, inside the working tree). */
/** `folderGiven`: the configuration named the folder (else `cwd` is the working tree, and a sandbox may choose its own). */
export type LaunchStdio = (
  server: StdioServerConfig & { cwd: string; folderGiven: boolean },
) => StdioLaunch | Promise<StdioLaunch>;

/** The launch without a sandbox: the configured command, in the configured folder. */
export const plainStdioLaunch: LaunchStdio = (server) => ({
  command: server.command,
  args: server.args,
  env: server.env,
  cwd: server.cwd,
});

export type SessionOptions = {
  workTree: string;
  launchStdio: LaunchStdio;
  /** For remote servers: reaches them through the egress proxy. Without it they cannot start. */
  fetch?: FetchLike | undefined;
  startTimeoutMs: number;
  /** How long a server may take to exit once its input is closed before it is killed. */
  stopGraceMs: number;
  onListChanged(): void;
  /** The server went away after it had answered: `garbage` when it wrote something that is not MCP. */
  onDown(reason: string, kind: "crash" | "garbage"): void;
  debug(message: string): void;
  /** Hides the secrets of the server's configuration (and every other `$NAME` value) in a text. */
  hide: (text: string) => string;
};

export type ServerSession = {
  /** The server's tools listing (raw, as the server sent it) once it answered; rejects with a StartFailure. */
  ready: Promise<unknown[]>;
  /** The tools listing again (after tools/list_changed). */
  listTools(timeoutMs: number): Promise<unknown[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult>;
  /** Why the session ended, once it has (at most `waitMs` from now): for a call that failed because the server went away. */
  endReason(waitMs: number): Promise<string | undefined>;
  /** Ends the session after a failure seen from outside (a remote server that stopped answering); reports it as down. */
  fail(reason: string): void;
  /** Stops the server: closes its input, kills it after the grace. Reports nothing; safe to call again. */
  close(): Promise<void>;
  /** The process of a stdio server (tests look for leftovers). */
  pid(): number | undefined;
};

/** Why a server did not start; `permanent` when trying again would give the same result. */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    /** `garbage`: it printed something that is not MCP on stdout. */
    readonly kind: "garbage" | "other" = "other",
  ) {
    super(message);
  }
}

/** Pages of tools/list read at most, and tools kept: a server is not allowed to flood the child. */
const MAX_LIST_PAGES = 20;
const MAX_LISTED_TOOLS = 1_000;

/**
 * How the layers of a sandboxed launch say that the server's command does not exist:
 * bwrap, prlimit or choom, and the bash that closes inherited descriptors
 * (sandbox/command-launchers.ts). The first group is the command.
 */
const NOT_FOUND = [
  /execvp (\S+): No such file or directory/,
  /failed to execute (\S+): No such file or directory/,
  /exec: (\S+): not found/,
];

const laxToolsList = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/**
 * The SDK's stdio transport, with its child process kept: the exit code says why a server
 * stopped, and a server that ignores the end of its input must be killed without waiting
 * the SDK's four seconds. The SDK keeps the process in a private field; without it (a
 * later SDK) the reasons only lose their exit code and the SDK's own close still kills.
 */
class WatchedStdioTransport extends StdioClientTransport {
  child: ChildProcess | undefined;
  override start(): Promise<void> {
    const started = super.start();
    // Taken at once (the SDK spawns before its promise settles): a close in the moment
    // before the process reports it has spawned must still be able to kill it, not wait
    // the SDK's seconds for an exit that a server ignoring its input never makes.
    const child = (this as unknown as { _process?: unknown })._process;
    if (child instanceof ChildProcess) this.child = child;
    return started;
  }
}

export function startSession(config: McpServerConfig, options: SessionOptions): ServerSession {
  const clean = (text: string) => options.hide(text).replace(/\s+/g, " ").trim();
  const stderr = new TextTail();
  const client = new Client({ name: "laoding-toolhost", version: "1.0.0" }, { capabilities: {} });
  let transport: WatchedStdioTransport | StreamableHTTPClientTransport | undefined;
  let launchedCommand = config.transport === "stdio" ? config.command : "";
  let phase: "starting" | "up" | "ended" = "starting";
  const ended = () => phase === "ended";
  let endReason: string | undefined;
  const endWaiters: (() => void)[] = [];
  let closing: Promise<void> | undefined;
  let settle!: { resolve(tools: unknown[]): void; reject(error: StartFailure): void };
  const ready = new Promise<unknown[]>((resolve, reject) => (settle = { resolve, reject }));
  // Nobody may be waiting when a start fails after a close; the failure is reported anyway.
  ready.catch(() => undefined);

  const withStderr = (reason: string) => {
    const tail = stderr.lastLines(400, options.hide);
    return tail ? `${reason}; stderr: ${tail}` : reason;
  };

  /** Ends the session once, whoever notices first; a failure seen while starting rejects `ready`. */
  const end = (reason: string, kind: "crash" | "garbage" | "closed", permanent = false): void => {
    if (phase === "ended") return;
    const wasStarting = phase === "starting";
    phase = "ended";
    endReason = clean(reason);
    for (const wake of endWaiters.splice(0)) wake();
    clearTimeout(startDeadline);
    void stop();
    if (kind === "closed") return settle.reject(new StartFailure("stopped before it answered", false));
    if (wasStarting)
      settle.reject(
        new StartFailure(endReason, permanent || kind === "garbage", kind === "garbage" ? "garbage" : "other"),
      );
    else options.onDown(endReason, kind);
  };

  /** Why the process went away: its exit, in words, with what it said on stderr. */
  const exitReason = (): string => {
    const child = transport instanceof WatchedStdioTransport ? transport.child : undefined;
    const notFound = NOT_FOUND.map((pattern) => pattern.exec(stderr.lastLines(4_000))).find(Boolean);
    if (notFound) return `command not found: ${notFound[1]}`;
    const how =
      child?.signalCode != null
        ? `was killed by ${child.signalCode}`
        : child?.exitCode != null
          ? `exited with code ${child.exitCode}`
          : "closed the connection";
    return withStderr(`${how}${phase === "starting" ? " before it answered" : ""}`);
  };

  // Stdio: the pipe's last bytes of stderr may still be on their way when the process
  // is reported closed; a turn later the tail has them.
  const endAfterExit = () => setImmediate(() => end(exitReason(), "crash"));

  const startDeadline = setTimeout(
    () => end(withStderr(`did not answer within ${options.startTimeoutMs} ms`), "crash"),
    options.startTimeoutMs,
  );

  const stop = (): Promise<void> =>
    (closing ??= (async () => {
      const child = transport instanceof WatchedStdioTransport ? transport.child : undefined;
      const closed = client.close().catch(() => undefined);
      // No pid: it never spawned (its command is missing), and no exit will come.
      if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return closed;
      const exited = new Promise<void>((done) => child.once("exit", () => done()));
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<"late">((done) => (timer = setTimeout(() => done("late"), options.stopGraceMs)));
      if ((await Promise.race([exited, grace])) === "late") {
        child.kill("SIGKILL");
        await exited;
      }
      clearTimeout(timer);
      await closed;
    })());

  client.onerror = (error) => {
    // A line on stdout that is not JSON-RPC: the SDK's reader says so here and goes on
    // reading; a server that mixes its own prints into the protocol cannot be trusted to
    // answer correctly, so it is stopped.
    if (config.transport === "stdio" && (error instanceof SyntaxError || error.name === "ZodError")) {
      // Hidden before it is cut: a cut secret would show its first half.
      end(`printed something that is not MCP on stdout (${clean(error.message).slice(0, 120)})`, "garbage");
      return;
    }
    if (/ReadBuffer exceeded maximum size/.test(error.message)) {
      end("wrote a message over 10 MB on stdout", "crash");
      return;
    }
    options.debug(`${config.name}: ${clean(error.message)}`);
  };
  client.onclose = () => {
    if (phase !== "ended") endAfterExit();
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onListChanged());

  const listTools = async (timeoutMs: number): Promise<unknown[]> => {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_LISTED_TOOLS; page += 1) {
      const listed = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, laxToolsList, {
        timeout: timeoutMs,
      });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return tools.slice(0, MAX_LISTED_TOOLS);
  };

  void (async () => {
    transport = await createTransport(config, options, (command) => (launchedCommand = command));
    if (ended()) return; // closed while the launch was being built
    if (transport instanceof WatchedStdioTransport)
      transport.stderr?.on("data", (chunk: Buffer | string) => stderr.push(chunk.toString()));
    await client.connect(transport as Transport, { timeout: options.startTimeoutMs });
    const tools = await listTools(options.startTimeoutMs);
    if (phase !== "starting") return;
    phase = "up";
    clearTimeout(startDeadline);
    settle.resolve(tools);
  })().catch((error: unknown) => {
    if (phase === "ended") return;
    if (error instanceof StartFailure) return end(error.message, "crash", error.permanent);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return end(`command not found: ${launchedCommand}`, "crash");
    if (code === "EACCES") return end(`command not executable: ${launchedCommand}`, "crash");
    if (isMcpError(error, ErrorCode.ConnectionClosed) && config.transport === "stdio") return endAfterExit();
    if (config.transport === "http")
      return end(`cannot connect to ${new URL(config.url).origin}: ${describeRemoteError(error)}`, "crash");
    end(withStderr((error as Error).message), "crash");
  });

  return {
    ready,
    listTools,
    // The schema makes it a CallToolResult (content defaults to []); the SDK's type also
    // admits the 2024 `toolResult` form, which that schema never yields.
    callTool: (name, args, { signal, timeoutMs }) =>
      client.callTool({ name, arguments: args }, CallToolResultSchema, {
        signal,
        timeout: timeoutMs,
      }) as Promise<CallToolResult>,
    endReason: async (waitMs) => {
      if (phase !== "ended") {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((wake) => {
          endWaiters.push(wake);
          timer = setTimeout(wake, waitMs);
        });
        clearTimeout(timer);
      }
      return endReason;
    },
    fail: (reason) => end(reason, "crash"),
    close: () => {
      end("stopped", "closed");
      return stop();
    },
    pid: () => (transport instanceof WatchedStdioTransport ? transport.child?.pid : undefined),
  };
}

async function createTransport(
  config: McpServerConfig,
  options: SessionOptions,
  launched: (command: string) => void,
): Promise<WatchedStdioTransport | StreamableHTTPClientTransport> {
  if (config.transport === "http") {
    if (!options.fetch)
      throw new StartFailure(
        "this agent has no network for remote MCP servers: put the server's host on the agent's network allow list",
        true,
      );
    return new StreamableHTTPClientTransport(new URL(config.url), {
      fetch: options.fetch,
      requestInit: { headers: config.headers },
    });
  }
  const launch = await options.launchStdio({
    ...config,
    cwd: serverFolder(config, options.workTree),
    folderGiven: config.cwd !== undefined,
  });
  launched(launch.command);
  return new WatchedStdioTransport({ ...launch, stderr: "pipe" });
}

/** The folder a stdio server runs in: its `cwd`, which must be an existing folder inside the working tree. */
function serverFolder(config: StdioServerConfig, workTree: string): string {
  if (config.cwd === undefined) return workTree;
  const folder = isAbsolute(config.cwd) ? config.cwd : resolve(workTree, config.cwd);
  if (!existsSync(folder)) throw new StartFailure(`its cwd ${config.cwd} does not exist`, true);
  if (!isWithin(workTree, realpathSync.native(folder)))
    throw new StartFailure(`its cwd ${config.cwd} is outside the agent's working tree`, true);
  return realpathSync.native(folder);
}
