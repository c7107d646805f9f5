/**
 * `laoding gaps show` with the write-ahead audit (issue 29): a trace's tool calls with
 * their outcome, and a call whose process stopped before its outcome was written as
 * "outcome unknown (the bot stopped)", before the bot's sweep and after it.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { createToolCallsStore } from "../../src/store/tool-calls-store.js";
import { runLaoding } from "../helpers/cli.js";
import { realWorkspace } from "../helpers/real-toolhost.js";

describe("laoding gaps show: the trace's tool calls", () => {
  it("shows each call's outcome, and 'outcome unknown (the bot stopped)' for one its stopped process left open", async () => {
    const workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none" });
    const store = await openStore(workspace.layout.databaseTarget, systemClock);
    let gapId: number;
    try {
      gapId = await store.gaps.record({
        agentId: "a",
        traceId: "tr-stopped",
        intentKey: "deploy",
        reason: "tool_failed",
        gapClass: "capability",
        userText: "deploy it",
      });
      // A process that is gone (spawnSync has reaped it) wrote these rows.
      const gone = spawnSync("true").pid;
      const trail = createToolCallsStore(store.sql, systemClock, undefined, { writer: `${hostname()}:${gone}` });
      const read = trail.begin({
        traceId: "tr-stopped",
        agentId: "a",
        tool: "file.read",
        argsDigest: "d1",
        args: '{"path":"Makefile"}',
      });
      read.finish({ ok: true, durationMs: 3, bytes: 120 });
      await read.committed;
      const refused = trail.begin({
        traceId: "tr-stopped",
        agentId: "a",
        tool: "file.write",
        argsDigest: "d2",
        args: '{"path":"x"}',
      });
      refused.finish({ ok: false, errorCode: "AUDIT_REFUSED", durationMs: 1 });
      await refused.committed;
      await trail.begin({
        traceId: "tr-stopped",
        agentId: "a",
        tool: "shell.exec",
        argsDigest: "d3",
        args: '{"command":"make deploy"}',
      }).committed;
    } finally {
      await store.close();
    }
    const show = async () => {
      const run = await runLaoding(["gaps", "show", String(gapId), "--workspace", workspace.workspaceDir], {
        repoRoot: workspace.repoRoot,
      });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout;
    };
    const calls =
      /\ntool calls:\n {2}\S+ \S+ file\.read ok 3 ms, 120 bytes \(args \{"path":"Makefile"\}\)\n {2}\S+ \S+ file\.write AUDIT_REFUSED 1 ms \(args \{"path":"x"\}\)\n {2}\S+ \S+ shell\.exec outcome unknown \(the bot stopped\) \(args \{"command":"make deploy"\}\)\n/;
    expect(await show()).toMatch(calls);
    // After the sweep the row says so itself; the view reads the same.
    const swept = await openStore(workspace.layout.databaseTarget, systemClock);
    try {
      expect(await swept.toolCalls.sweepStopped()).toBe(1);
    } finally {
      await swept.close();
    }
    expect(await show()).toMatch(calls);
    const json = await runLaoding(["gaps", "show", String(gapId), "--json", "--workspace", workspace.workspaceDir], {
      repoRoot: workspace.repoRoot,
    });
    expect((JSON.parse(json.stdout) as { toolCalls: unknown[] }).toolCalls).toMatchObject([
      { tool: "file.read", outcome: "ok", bytes: 120 },
      { tool: "file.write", outcome: "failed", errorCode: "AUDIT_REFUSED" },
      { tool: "shell.exec", outcome: "unknown", errorCode: "OUTCOME_UNKNOWN", ok: null },
    ]);
  });
});
