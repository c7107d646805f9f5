/**
 * The manager of MCP servers as a test sets it up: the real fake servers of test/fakes
 * (spawned with tsx, as real children), a logger whose lines the test reads, and every
 * manager stopped after its test.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach } from "vitest";
import {
  createMcpServers,
  type McpServers,
  type McpServersOptions,
} from "../../../src/toolhost/mcp-servers/mcp-servers.js";
import { plainStdioLaunch } from "../../../src/toolhost/mcp-servers/server-session.js";
import type { McpServerConfig } from "../../../src/toolhost/protocol.js";
import { REAL_REPO_ROOT, tempDir } from "../../helpers/temp-dir.js";
import { isAlive } from "../../helpers/toolhost.js";
import { ToolError } from "../../../src/toolhost/tool-error.js";

export const FAKE_STDIO_SERVER = join(REAL_REPO_ROOT, "test/fakes/mcp-stdio-server.ts");
const TSX = import.meta.resolve("tsx");

/** The fake stdio server as agents.json would configure it (after `$NAME` resolution). */
export function fakeStdio(
  options: { name?: string; flags?: string[]; env?: Record<string, string>; cwd?: string } = {},
): McpServerConfig {
  return {
    name: options.name ?? "fake",
    transport: "stdio",
    command: process.execPath,
    args: ["--import", TSX, FAKE_STDIO_SERVER, ...(options.flags ?? [])],
    env: options.env ?? {},
    ...(options.cwd ? { cwd: options.cwd } : {}),
  };
}

export type LogLine = { level: number; msg: string; [key: string]: unknown };

const managers: Record<"test" | "file", McpServers[]> = { test: [], file: [] };
afterEach(async () => {
  await Promise.all(managers.test.splice(0).map((manager) => manager.stopAll()));
});
afterAll(async () => {
  await Promise.all(managers.file.splice(0).map((manager) => manager.stopAll()));
});

/**
 * A manager with plain launches in a fresh working tree; its log lines are in `logs`.
 * Stopped after the test, or with `scope: "file"` after the file (servers take a second to start).
 */
export function makeManager(options: Partial<McpServersOptions> & { scope?: "test" | "file" } = {}) {
  const { scope = "test", ...overrides } = options;
  const logs: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const workTree = tempDir("laoding-mcp-", scope);
  const manager = createMcpServers({ logger, workTree, launchStdio: plainStdioLaunch, stopGraceMs: 500, ...overrides });
  managers[scope].push(manager);
  return { manager, logs, workTree, warnings: () => logs.filter((line) => line.level === 40).map((line) => line.msg) };
}

/** Generous: on a busy machine a server under tsx can take seconds to start. */
export const TIMEOUTS = { startTimeoutMs: 20_000, callTimeoutMs: 10_000 };
/** For a test that starts servers one after another. */
export const SLOW_TEST = { timeout: 60_000 };

/** The context a tool runs with outside toolhost-server.ts: only the signal and the output cap matter to MCP tools. */
export function callContext(signal = new AbortController().signal) {
  return {
    cwd: "/",
    limits: { outputMaxBytes: 64 * 1024 },
    signal,
  } as unknown as Parameters<import("../../../src/toolhost/tools/define-tool.js").Tool["execute"]>[1];
}

/** Live processes whose working folder is `folder` (or inside it): a server and anything it started. */
export function processesIn(folder: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if ((cwd === folder || cwd.startsWith(`${folder}/`)) && isAlive(Number(name))) pids.push(Number(name));
    } catch {
      // Gone, or not ours to look at.
    }
  }
  return pids;
}

/** Calls a tool by the agent's name through the manager: its output, or the failure's code and reason. */
export function callOn(manager: McpServers) {
  return async (name: string, args: Record<string, unknown> = {}) => {
    const tool = await manager.find(name);
    if (!tool) throw new Error(`no tool ${name}`);
    try {
      return await tool.execute(args, callContext());
    } catch (error) {
      if (error instanceof ToolError) return { code: error.code, reason: error.message };
      throw error;
    }
  };
}
