import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach } from "vitest";
import { ToolhostClient, type AuditTrail } from "../../src/toolhost/client/toolhost-client.js";
import { ToolhostSupervisor, type SupervisorOptions } from "../../src/toolhost/client/toolhost-supervisor.js";
import { REAL_REPO_ROOT } from "./temp-dir.js";

export const FIXTURE_CHILD = join(REAL_REPO_ROOT, "test/fixtures/toolhost/misbehaving-child.mjs");
export const silentLogger = pino({ level: "silent" });

const spawned: ChildProcess[] = [];
const supervisors: ToolhostSupervisor[] = [];
const fileSupervisors: ToolhostSupervisor[] = [];

afterAll(async () => {
  await Promise.all(fileSupervisors.splice(0).map((supervisor) => supervisor.stop()));
});

afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((supervisor) => supervisor.stop()));
  for (const child of spawned.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

export function spawnFixture(mode: string): ChildProcess {
  const child = spawn(process.execPath, [FIXTURE_CHILD, mode], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  spawned.push(child);
  return child;
}

export type ClientSetup = {
  spawn?: () => ChildProcess;
  mode?: string;
  concurrency?: number;
  queueMax?: number;
  callTimeoutMs?: number;
  heartbeatMs?: number;
  restart?: Partial<SupervisorOptions["restart"]>;
  stopGraceMs?: number;
  maxFrameBytes?: number;
  /** How long a child may take to answer its first ping (a real child under tsx on a busy machine is slow). */
  startTimeoutMs?: number;
  /** "test" (default): stopped after each test; "file": kept for the whole file. */
  scope?: "test" | "file";
  /** The supervisor's clock (cool-downs), for tests that move time instead of waiting. */
  clock?: { now(): number };
  idleStopMs?: number;
  /** Where each call's audit row goes (default: kept in `audits`, committed at once). */
  audit?: AuditTrail;
  /** Sent to each new child before its first call (the supervisor's `initialize`: the MCP servers). */
  initialize?: SupervisorOptions["initialize"];
};

export function makeClient(setup: ClientSetup = {}) {
  const spawns: ChildProcess[] = [];
  const supervisor = new ToolhostSupervisor({
    agentId: "fixture",
    spawn: () => {
      const child = setup.spawn ? setup.spawn() : spawnFixture(setup.mode ?? "normal");
      spawns.push(child);
      return child;
    },
    maxFrameBytes: setup.maxFrameBytes ?? 1024 * 1024,
    heartbeatMs: setup.heartbeatMs ?? 60_000,
    startTimeoutMs: setup.startTimeoutMs ?? 5_000,
    stopGraceMs: setup.stopGraceMs ?? 1_000,
    restart: {
      maxCrashes: 5,
      windowMs: 60_000,
      baseDelayMs: 10,
      maxDelayMs: 50,
      coolDownMs: 60_000,
      random: () => 1,
      ...setup.restart,
    },
    logger: silentLogger,
    ...(setup.clock ? { clock: setup.clock } : {}),
    ...(setup.initialize ? { initialize: setup.initialize } : {}),
  });
  (setup.scope === "file" ? fileSupervisors : supervisors).push(supervisor);
  const memory = memoryAudit();
  const client = new ToolhostClient({
    agentId: "fixture",
    supervisor,
    concurrency: setup.concurrency ?? 4,
    queueMax: setup.queueMax ?? 16,
    callTimeoutMs: setup.callTimeoutMs ?? 5_000,
    ...(setup.idleStopMs ? { idleStopMs: setup.idleStopMs } : {}),
    audit: setup.audit ?? memory.trail,
  });
  return { client, supervisor, spawns, audits: memory.audits };
}

/** An audit trail in memory: a row per call, its intent and then its outcome; every row commits at once. */
export function memoryAudit() {
  const audits: Record<string, unknown>[] = [];
  const trail: AuditTrail = {
    begin(intent, outcome) {
      const row: Record<string, unknown> = { ...intent, ...outcome };
      audits.push(row);
      return { committed: Promise.resolve(), finish: (result) => void Object.assign(row, result) };
    },
  };
  return { trail, audits };
}

/** True while the process exists and is not a zombie (a zombie is dead, only not yet reaped). */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Live (non-zombie) processes whose command line matches, or that belong to a uid. */
export function livePids(filter: { pattern?: RegExp; uid?: number }): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!isAlive(Number(name))) continue;
      if (
        filter.uid !== undefined &&
        !new RegExp(`^Uid:\\s+${filter.uid}\\s`, "m").test(readFileSync(`/proc/${name}/status`, "utf8"))
      )
        continue;
      if (filter.pattern && !filter.pattern.test(readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ")))
        continue;
      pids.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Waits until `check` is true, polling; fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function openFdCount(): number {
  return readdirSync("/proc/self/fd").length;
}
