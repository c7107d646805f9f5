/**
 * Several real `laoding start` processes on one database and one workspace, for the
 * replica tests (test/channels/replicas.test.ts): a workspace seeded once with the shared
 * configuration, replica processes started as `laoding start` is started in production
 * (tsx over src/cli/main.ts, JSON logs on stderr), a tiny round-robin HTTP proxy in front
 * of their webhook servers, a Telegram "sender" that re-delivers until a 200, and a way to
 * tell which process owns a loopback TCP connection (/proc, Linux).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { vi } from "vitest";
import { runLaoding } from "./cli.js";
import { REAL_REPO_ROOT } from "./temp-dir.js";

const CLI_MAIN = join(REAL_REPO_ROOT, "src/cli/main.ts");

/**
 * Seeds `workspaceDir` as `laoding init` does and writes the configuration every replica
 * shares into its configs/env. Replicas then only differ by their process environment.
 */
export async function seedSharedWorkspace(workspaceDir: string, settings: Record<string, string>): Promise<void> {
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot: REAL_REPO_ROOT });
  if (seeded.code !== 0) throw new Error(`laoding init failed:\n${seeded.stderr}`);
  writeFileSync(
    join(workspaceDir, "configs/env"),
    `${Object.entries(settings)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n")}\n`,
  );
}

export type LogLine = { msg: string; level: number; time?: number; [field: string]: unknown };

export type ReplicaProcess = {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Everything the process wrote on stderr so far (JSON log lines). */
  readonly stderr: string;
  /** Resolves at "LaodingBot ready"; rejects (with its stderr) if the process exits first. */
  readonly ready: Promise<void>;
  /** Exit code, or null after a signal. */
  readonly exited: Promise<number | null>;
  readonly alive: boolean;
  /** Its log lines, parsed (lines that are not JSON are skipped). */
  lines(): LogLine[];
  kill(signal: NodeJS.Signals): void;
};

/** Starts `laoding start --workspace DIR` as its own process with REPLICA_NAME=`name` and `env` on top. */
export function startReplicaProcess(options: {
  name: string;
  workspaceDir: string;
  env?: Record<string, string>;
}): ReplicaProcess {
  const child = spawn(process.execPath, ["--import", "tsx", CLI_MAIN, "start", "--workspace", options.workspaceDir], {
    cwd: REAL_REPO_ROOT,
    // LOG_LEVEL in the process environment: JSON log lines on stderr.
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", REPLICA_NAME: options.name, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let alive = true;
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      alive = false;
      resolve(code);
    }),
  );
  child.stdout?.resume();
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (stderr.includes("LaodingBot ready")) resolve();
    });
    void exited.then((code) =>
      reject(new Error(`replica ${options.name} exited (${code}) before it was ready:\n${stderr.slice(-4_000)}`)),
    );
  });
  // Not every test waits for it; a start-up failure must not be an unhandled rejection.
  ready.catch(() => undefined);
  return {
    name: options.name,
    pid: child.pid as number,
    child,
    get stderr() {
      return stderr;
    },
    ready,
    exited,
    get alive() {
      return alive;
    },
    lines: () =>
      stderr
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as LogLine];
          } catch {
            return [];
          }
        }),
    kill(signal) {
      if (alive) child.kill(signal);
    },
  };
}

/** SIGKILLs replicas still running (and their toolhost children with them, which die with their parent's pipes). */
export async function killAll(replicas: ReplicaProcess[]): Promise<void> {
  for (const replica of replicas) replica.kill("SIGKILL");
  await Promise.all(replicas.map((replica) => replica.exited));
}

export type Upstream = { name: string; port: number };
export type ProxiedRequest = { path: string; upstream: string | undefined; status: number; failovers: string[] };

export type RoundRobinProxy = {
  port: number;
  url(path: string): string;
  /** Every request the proxy answered: which upstream answered it (none: 502) and which ones failed before. */
  requests: ProxiedRequest[];
  close(): Promise<void>;
};

/**
 * A reverse proxy as small as it gets: each request goes to the next upstream in turn; when
 * that one cannot be reached (or drops the connection before answering), to the next one;
 * the first answer's status and body go back. 502 when none answered.
 */
export async function startRoundRobinProxy(upstreams: Upstream[]): Promise<RoundRobinProxy> {
  let next = 0;
  const requests: ProxiedRequest[] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const first = next++ % upstreams.length;
      const failovers: string[] = [];
      for (let offset = 0; offset < upstreams.length; offset += 1) {
        const upstream = upstreams[(first + offset) % upstreams.length] as Upstream;
        try {
          const answer = await forward(
            upstream.port,
            request.method ?? "POST",
            request.url ?? "/",
            request.headers,
            body,
          );
          requests.push({ path: request.url ?? "/", upstream: upstream.name, status: answer.status, failovers });
          response.writeHead(answer.status, { "content-type": answer.contentType }).end(answer.body);
          return;
        } catch {
          failovers.push(upstream.name);
        }
      }
      requests.push({ path: request.url ?? "/", upstream: undefined, status: 502, failovers });
      response.writeHead(502, { "content-type": "text/plain" }).end("no upstream answered");
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(
  port: number,
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): Promise<{ status: number; contentType: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const { host: _host, connection: _connection, ...rest } = headers;
    // A fresh connection per request (agent: false): a dead upstream is a refused connection, not a stale pooled one.
    const outgoing = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: false,
        headers: { ...rest, "content-length": String(body.length) },
        timeout: 60_000,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 502,
            contentType: String(incoming.headers["content-type"] ?? "text/plain"),
            body: Buffer.concat(chunks),
          }),
        );
        incoming.on("error", reject);
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("upstream timed out")));
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/**
 * Telegram's side of a webhook: posts `update` with the secret until it is answered 200,
 * as Telegram re-delivers an update that was not acknowledged. Returns the attempts made.
 */
export async function postUntilAccepted(
  url: string,
  secret: string,
  update: unknown,
  options: { retryMs?: number; attempts?: number } = {},
): Promise<number> {
  const body = JSON.stringify(update);
  const attempts = options.attempts ?? 100;
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
        body,
      });
      await response.arrayBuffer();
      if (response.status === 200) return attempt;
    } catch {
      // Nothing answered: try again, as Telegram does.
    }
    await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 200));
  }
  throw new Error(`update not accepted after ${attempts} attempts: ${body.slice(0, 200)}`);
}

/** Waits until `check` stops throwing (polling every 50 ms), up to `timeoutMs`. */
export const until = (check: () => void | Promise<void>, timeoutMs: number) =>
  vi.waitFor(check, { timeout: timeoutMs, interval: 50 });

/**
 * Which of `processes` holds the TCP connection whose local port is `localPort` (the
 * client's side of a loopback connection to `serverPort`): the socket's inode from
 * /proc/net/tcp{,6}, then the process whose descriptors include it. Undefined when the
 * connection is gone or belongs to none of them (or not on Linux).
 */
export function connectionOwner(
  localPort: number,
  serverPort: number,
  processes: { name: string; pid: number }[],
): string | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(":")[1];
      const remote = fields[2]?.split(":")[1];
      if (local === undefined || remote === undefined) continue;
      if (
        parseInt(local, 16) === localPort &&
        parseInt(remote, 16) === serverPort &&
        fields[9] !== undefined &&
        fields[9] !== "0"
      )
        inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const candidate of processes) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${candidate.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${candidate.pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) return candidate.name;
    }
  }
  return undefined;
}
