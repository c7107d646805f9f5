/**
 * The write-ahead audit (issue 29) with the real toolhost child and the real store, on
 * every engine: a bot process SIGKILLed while a slow command (a call with effects) runs in
 * its child keeps the call's intent row, shown as "outcome unknown (the bot stopped)" and
 * marked by the next start-up's sweep; a read's result never reaches its caller before its
 * intent row is committed.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { readAgentsFile } from "../../src/config/agents.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createBotRuntime } from "../../src/runtime/bot-runtime.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore, type Store } from "../../src/store/store.js";
import { createToolCallsStore, describeToolCall, OUTCOME_UNKNOWN } from "../../src/store/tool-calls-store.js";
import { CLI_ENTRY, giveToAgent, realClient, realWorkspace } from "../helpers/real-toolhost.js";
import { STORE_ENGINES, testDatabaseUrl } from "../helpers/test-store.js";
import { isAlive, livePids, waitFor } from "../helpers/toolhost.js";

const module = (path: string) => JSON.stringify(fileURLToPath(new URL(path, import.meta.url)));

/** Polls an async check until it holds. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type RawRow = { tool: string; ok: number | null; errorCode: string | null; writer: string; args: string };
const rawRows = (store: Store) =>
  store.sql.all<RawRow>("SELECT tool, ok, error_code AS errorCode, writer, args FROM tool_calls ORDER BY id");

describe.each(STORE_ENGINES)("write-ahead audit, real child and store, on %s", (engine) => {
  it("a bot process SIGKILLed while a slow command runs in its child keeps the intent row; the next start-up marks it outcome unknown", async () => {
    const workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none-unsafe",
      TOOLHOST_UID_BASE: "53000",
      ALLOWED_COMMANDS: "sleep,echo",
      SHELL_TIMEOUT_MS: "60000",
      ...(engine === "postgres" ? { DATABASE_URL: await testDatabaseUrl() } : {}),
    });
    // Planned here first, as root (the trees' owners and modes), as the bot's start-up does.
    workspace.launches();
    // The bot's own path: configuration, launches, the pool factory and the store's audit trail.
    const script = `
      import { pino } from "pino";
      import { readAgentsFile } from ${module("../../src/config/agents.ts")};
      import { loadConfig } from ${module("../../src/config/load-config.ts")};
      import { createRuntimeLayout } from ${module("../../src/config/runtime-layout.ts")};
      import { prepareToolhostLaunches } from ${module("../../src/runtime/toolhost-launch.ts")};
      import { createToolhostPool } from ${module("../../src/runtime/toolhost-pool-factory.ts")};
      import { systemClock } from ${module("../../src/store/clock.ts")};
      import { openStore } from ${module("../../src/store/store.ts")};
      const [repoRoot, workspaceDir, cliEntry] = process.argv.slice(1);
      const loaded = loadConfig({ env: {}, repoRoot, cwd: repoRoot, workspaceDir });
      const layout = createRuntimeLayout(workspaceDir, loaded.config);
      const launches = prepareToolhostLaunches({ config: loaded.config, layout, agents: readAgentsFile(layout.agentsFile), cliEntry });
      const store = await openStore(layout.databaseTarget, systemClock);
      const pool = createToolhostPool({ config: loaded.config, launches, store, logger: pino({ level: "silent" }) });
      const client = pool.client("a");
      await client.ping();
      process.stdout.write("child " + client.supervisor.pid + "\\n");
      void client.callTool({ name: "shell.exec", args: { command: "sleep 29" }, traceId: "tr-killed", sessionId: 1 });
      setInterval(() => undefined, 1000);`;
    const bot = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script, workspace.repoRoot, workspace.workspaceDir, CLI_ENTRY],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    bot.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    bot.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = new Promise<void>((resolve) => bot.once("exit", () => resolve()));
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    let sleeps: number[] = [];
    let childPid: number | undefined;
    try {
      // The command is running in the child: its row was committed before it was sent.
      await until(
        async () => (sleeps = livePids({ pattern: /^sleep 29/ })).length > 0,
        60_000,
        `the command to run in the child (bot stderr: ${stderr})`,
      );
      childPid = Number(/child (\d+)/.exec(stdout)?.[1]);
      expect(await rawRows(store)).toEqual([
        {
          tool: "shell.exec",
          ok: null,
          errorCode: null,
          writer: `${hostname()}:${bot.pid}`,
          args: '{"command":"sleep 29"}',
        },
      ]);
      bot.kill("SIGKILL");
      await exited;
      // The bot is gone: its call's row stays, outcome unknown.
      expect(await rawRows(store)).toMatchObject([{ tool: "shell.exec", ok: null, errorCode: null }]);
      const [row] = await store.toolCalls.byTrace("tr-killed");
      expect(row).toMatchObject({ tool: "shell.exec", outcome: "unknown", sessionId: 1 });
      expect(describeToolCall(row as NonNullable<typeof row>)).toBe("outcome unknown (the bot stopped)");
      // Its child notices its parent gone (stdin closes) and ends, with the command.
      await waitFor(() => !isAlive(childPid), 15_000, "the orphaned child to exit");
      await waitFor(() => sleeps.every((pid) => !isAlive(pid)), 15_000, "the command to be killed");
    } finally {
      if (bot.exitCode === null && bot.signalCode === null) bot.kill("SIGKILL");
      for (const pid of [...sleeps, ...(childPid ? [childPid] : [])]) if (isAlive(pid)) process.kill(pid, "SIGKILL");
      await store.close();
    }

    // The next start-up of the bot sweeps: the row is marked, and the log says so.
    const warnings: string[] = [];
    const loaded = loadConfig({
      env: {},
      repoRoot: workspace.repoRoot,
      cwd: workspace.repoRoot,
      workspaceDir: workspace.workspaceDir,
    });
    const runtime = await createBotRuntime({
      loaded,
      layout: workspace.layout,
      agents: readAgentsFile(workspace.layout.agentsFile),
      logger: pino(
        { level: "warn" },
        { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) },
      ),
      cliEntry: CLI_ENTRY,
      launches: workspace.launches(),
      watchSkills: false,
    });
    try {
      expect(warnings).toContain(
        "tool calls whose process stopped before their outcome was recorded are marked 'outcome unknown (the bot stopped)'; laoding gaps show lists a trace's calls",
      );
      expect(await rawRows(runtime.store)).toMatchObject([
        { tool: "shell.exec", ok: null, errorCode: OUTCOME_UNKNOWN },
      ]);
      expect(await runtime.store.toolCalls.byTrace("tr-killed")).toMatchObject([{ outcome: "unknown" }]);
    } finally {
      await runtime.close();
    }
  }, 120_000);

  it("a read's result reaches its caller only once its intent row is in the database for every reader", async () => {
    const workspace = await realWorkspace({
      TOOLHOST_SANDBOX: "none-unsafe",
      TOOLHOST_UID_BASE: "53000",
      ...(engine === "postgres" ? { DATABASE_URL: await testDatabaseUrl() } : {}),
    });
    workspace.launches();
    const file = join(workspace.layout.agentTrees("a").workTree, "notes.txt");
    mkdirSync(workspace.layout.agentTrees("a").workTree, { recursive: true });
    writeFileSync(file, "remember the milk\n");
    giveToAgent(workspace, "a", file);
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    const flushes: Array<() => void> = [];
    // The audit trail with its commits held until the test runs them.
    const audit = createToolCallsStore(store.sql, systemClock, (flush) => void flushes.push(flush));
    /** On SQLite counted at once, by another connection, in the very callback the result reaches. */
    const countSqlite = (): number => {
      const reader = new Database(workspace.layout.databaseTarget, { readonly: true });
      try {
        return (reader.prepare("SELECT count(*) AS n FROM tool_calls").get() as { n: number }).n;
      } finally {
        reader.close();
      }
    };
    const countRows = async (): Promise<number> => {
      if (engine === "sqlite") return countSqlite();
      const reader = await openStore(workspace.layout.databaseTarget, systemClock);
      try {
        return (await reader.sql.get<{ n: number }>("SELECT count(*) AS n FROM tool_calls"))?.n ?? -1;
      } finally {
        await reader.close();
      }
    };
    try {
      const { client } = realClient(workspace, "a", { audit });
      await client.ping();
      let rowsWhenAnswered = -1;
      let answered = false;
      const call = client.callTool({ name: "file.read", args: { path: file }, traceId: "tr-read" }).then((result) => {
        answered = true;
        if (engine === "sqlite") rowsWhenAnswered = countSqlite();
        return result;
      });
      await waitFor(() => flushes.length === 1, 5_000, "the intent row to be queued");
      // The read went to the child at once; the child has long answered, and the result still waits.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answered).toBe(false);
      expect(await countRows()).toBe(0);
      flushes.shift()?.();
      const result = await call;
      // PostgreSQL is asked right after (its reader is a round trip away): rows only ever grow, the flush wrote one.
      if (engine === "postgres") rowsWhenAnswered = await countRows();
      expect(result).toEqual({ ok: true, output: "remember the milk\n", truncated: false });
      expect(rowsWhenAnswered).toBe(1);
      // The outcome follows in a later commit.
      expect(await rawRows(store)).toMatchObject([{ tool: "file.read", ok: null }]);
      while (flushes.length > 0) flushes.shift()?.();
      await until(async () => (await rawRows(store))[0]?.ok === 1, 5_000, "the outcome");
    } finally {
      await store.close();
    }
  }, 60_000);
});
