/**
 * One live toolhost child and its JSON-RPC connection. Invariants:
 * - every request settles exactly once: with its result, with TIMEOUT at its deadline
 *   (then `$/cancelRequest` goes to the child and a late answer is ignored), or with
 *   TOOLHOST_CRASHED as soon as the child exits or breaks the protocol;
 * - the child's exit, not the closing of its pipes, ends the connection (a grandchild
 *   holding stdout open must not keep a dead child "alive"); its process group is killed,
 *   then answers the child wrote before exiting are still read (Node may report the exit
 *   before the last bytes in the pipe), bounded by a short grace;
 * - results are validated against the method's schema before anyone sees them.
 */
import type { ChildProcess } from "node:child_process";
import { BoundedMessageReader } from "../bounded-reader.js";
import { FramedMessageWriter } from "../framed-writer.js";
import type { MethodDescriptor, ParamsOf, ResultOf } from "../protocol.js";
import { OWNER_TAG_VARIABLE, killTagged } from "../process-tags.js";
import { CONNECTION_DISPOSED, createRpcClient, type RpcClient } from "./rpc-client.js";
import { ToolhostError } from "./toolhost-error.js";

export type ExitInfo = { code: number | null; signal: NodeJS.Signals | null; reason: string };

/** How long a cancelled call waits for the child to confirm (its command killed) before giving up on it. */
const CANCEL_GRACE_MS = 5_000;

export type RequestOptions = { timeoutMs: number; signal?: AbortSignal };

type Pending = { fail: (error: ToolhostError) => void };

/** How long, after the child's exit, answers already in its stdout pipe are waited for. */
const EXIT_DRAIN_GRACE_MS = 200;

export class ChildConnection {
  private readonly connection: RpcClient;
  private readonly pending = new Set<Pending>();
  private exitInfo: ExitInfo | undefined;
  /** The child has exited; its last answers are being read before the connection ends. */
  private exiting = false;
  private readonly exitListeners: ((info: ExitInfo) => void)[] = [];
  private brokenReason: string | undefined;
  readonly exited: Promise<ExitInfo>;

  constructor(
    readonly child: ChildProcess,
    options: { maxFrameBytes: number; onLog?: (level: "error" | "warn", message: string) => void },
  ) {
    if (!child.stdout || !child.stdin) throw new Error("toolhost child must be spawned with piped stdin and stdout");
    const reader = new BoundedMessageReader(child.stdout, options.maxFrameBytes);
    const writer = new FramedMessageWriter(child.stdin, { batch: "tick" });
    this.connection = createRpcClient(reader, writer, { warn: (message) => options.onLog?.("warn", message) });
    // A protocol fault from the child: fail everything now and end the child.
    reader.onError((error) => this.breakWith(`protocol error from the toolhost: ${error.message}`));
    writer.onError(([error]) => this.breakWith(`cannot write to the toolhost: ${error.message}`));
    child.stdin.on("error", () => undefined);
    this.exited = new Promise((resolve) => this.exitListeners.push(resolve));
    child.once("exit", (code, signal) =>
      this.drainThenEnd({ code, signal, reason: this.brokenReason ?? describeExit(code, signal) }),
    );
    this.connection.listen();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.exiting && this.exitInfo === undefined && this.brokenReason === undefined;
  }

  request<M extends MethodDescriptor>(
    descriptor: M,
    params: ParamsOf<M>,
    options: RequestOptions,
  ): Promise<ResultOf<M>> {
    return new Promise<ResultOf<M>>((resolve, reject) => {
      if (!this.alive) {
        reject(
          new ToolhostError(
            "TOOLHOST_CRASHED",
            `the toolhost is gone (${this.brokenReason ?? this.exitInfo?.reason ?? "closed"})`,
          ),
        );
        return;
      }
      // Cancelled while waiting for a slot or a start: nothing was sent, nothing to wait for.
      if (options.signal?.aborted) {
        reject(new ToolhostError("TIMEOUT", `${descriptor.method} was cancelled`));
        return;
      }
      let settled = false;
      let id: number | undefined;
      let grace: NodeJS.Timeout | undefined;
      const entry: Pending = { fail: (error) => settle(() => reject(error)) };
      const settle = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(grace);
        options.signal?.removeEventListener("abort", onAbort);
        this.pending.delete(entry);
        action();
      };
      const cancel = () => {
        if (id !== undefined) this.connection.cancel(id);
      };
      const timer = setTimeout(() => {
        cancel();
        entry.fail(new ToolhostError("TIMEOUT", `${descriptor.method} got no answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      // The caller cancelled (Ctrl-C, shutdown): the child kills the call's processes and
      // answers; waiting for that answer means "cancelled" is only reported once they are gone.
      const onAbort = () => {
        cancel();
        clearTimeout(timer);
        grace = setTimeout(
          () => entry.fail(new ToolhostError("TIMEOUT", `${descriptor.method} was cancelled`)),
          CANCEL_GRACE_MS,
        );
      };
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.add(entry);
      try {
        id = this.connection.request(descriptor.method, params, (error, result) => {
          if (error) return settle(() => reject(mapRpcError(error, descriptor.method)));
          const parsed = descriptor.result.safeParse(result);
          settle(() =>
            parsed.success
              ? resolve(parsed.data as ResultOf<M>)
              : reject(
                  new ToolhostError(
                    "TOOLHOST_CRASHED",
                    `the toolhost answered ${descriptor.method} with an invalid result`,
                  ),
                ),
          );
        });
      } catch (error) {
        // After close, request throws: a rejection like any other failure to reach the child.
        entry.fail(
          new ToolhostError("TOOLHOST_CRASHED", `cannot send to the toolhost: ${(error as Error).message}`, {
            cause: error,
          }),
        );
      }
    });
  }

  onExit(listener: (info: ExitInfo) => void): void {
    if (this.exitInfo) listener(this.exitInfo);
    else this.exitListeners.push(listener);
  }

  /** Sends a signal to the child's whole process group (its tools and grandchildren). */
  kill(signal: NodeJS.Signals): void {
    if (!this.exitInfo && !this.exiting) this.signalGroup(signal);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone (or was never ours): signal the child alone if it is still there.
      if (!this.exitInfo) this.child.kill(signal);
    }
  }

  private breakWith(reason: string): void {
    if (this.brokenReason || this.exitInfo) return;
    this.brokenReason = reason;
    this.failAll(reason);
    this.kill("SIGKILL");
  }

  private failAll(reason: string): void {
    for (const entry of [...this.pending]) entry.fail(new ToolhostError("TOOLHOST_CRASHED", reason));
  }

  private drainThenEnd(info: ExitInfo): void {
    this.exiting = true;
    // Whatever the child started (a grandchild holding our pipe) goes with it, which
    // also lets the pipe end once its last bytes are read. Its shell commands run in
    // groups of their own; in none mode nothing else would end them.
    this.signalGroup("SIGKILL");
    if (this.child.pid !== undefined) killTagged(OWNER_TAG_VARIABLE, String(this.child.pid));
    const stdout = this.child.stdout;
    const end = () => {
      clearTimeout(grace);
      // Answers read so far have settled as they arrived; their callers run first.
      setImmediate(() => this.handleExit(info));
    };
    const grace = setTimeout(end, EXIT_DRAIN_GRACE_MS);
    if (this.pending.size === 0 || !stdout || stdout.readableEnded || stdout.destroyed) end();
    else stdout.once("close", end);
  }

  private handleExit(info: ExitInfo): void {
    if (this.exitInfo) return;
    this.exitInfo = info;
    this.failAll(`the toolhost exited (${info.reason})`);
    this.connection.dispose();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.child.stdin?.destroy();
    for (const listener of this.exitListeners.splice(0)) listener(info);
  }
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}

function mapRpcError(error: unknown, method: string): ToolhostError {
  if (error instanceof ToolhostError) return error;
  const code = (error as { code?: number }).code;
  // Requests still waiting when the connection is disposed (vscode-jsonrpc's code, kept by rpc-client).
  if (code === CONNECTION_DISPOSED || code === -32099)
    return new ToolhostError("TOOLHOST_CRASHED", `the toolhost connection closed during ${method}`, { cause: error });
  // Any other JSON-RPC error is a protocol fault (we validate before sending, so a bug).
  return new ToolhostError("INTERNAL", `${method} was refused by the toolhost: ${(error as Error).message}`, {
    cause: error,
  });
}
