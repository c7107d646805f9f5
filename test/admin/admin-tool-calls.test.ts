/**
 * GET /v1/agents/:id/tool-calls: the audit trail with each call's outcome (issue 29), a
 * call whose process stopped before its outcome was written as "outcome unknown (the bot
 * stopped)". Real server on 127.0.0.1:0, real SQLite.
 */
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { createToolCallsStore } from "../../src/store/tool-calls-store.js";
import { launchTestAdmin } from "../helpers/admin.js";
import { realWorkspace } from "../helpers/real-toolhost.js";

const TOKEN = "admin-token-for-tests-0123456789";
let admin: AdminServer;

beforeAll(async () => {
  const workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", ADMIN_TOKEN: TOKEN });
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    // Written by a process that is gone (spawnSync has reaped it).
    const trail = createToolCallsStore(store.sql, systemClock, undefined, {
      writer: `${hostname()}:${spawnSync("true").pid}`,
    });
    const intent = (tool: string, traceId: string, agentId = "a") => ({
      traceId,
      agentId,
      tool,
      argsDigest: "d",
      args: `{"tool":"${tool}"}`,
    });
    const read = trail.begin(intent("file.read", "tr-1"));
    read.finish({ ok: true, durationMs: 4, bytes: 10 });
    await read.committed;
    await trail.begin(intent("shell.exec", "tr-1")).committed;
    const other = trail.begin(intent("file.list", "tr-2"));
    other.finish({ ok: false, errorCode: "PATH_NOT_FOUND", durationMs: 1 });
    await other.committed;
    const agentB = trail.begin(intent("file.read", "tr-1", "b"));
    agentB.finish({ ok: true, durationMs: 1 });
    await agentB.committed;
  } finally {
    await store.close();
  }
  admin = await launchTestAdmin(workspace, { secrets: [TOKEN], logLines: [] });
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

type Call = { tool: string } & Record<string, unknown>;
type Answer = { ok: boolean; data?: { agent: string; calls: Call[] }; error?: { code: string; message: string } };

async function get(path: string): Promise<{ status: number; body: Answer }> {
  const response = await fetch(`${admin.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: response.status, body: (await response.json()) as Answer };
}

describe("admin API: the tool-call audit", () => {
  it("lists an agent's calls newest first, each with its outcome; one its stopped process left open is outcome unknown", async () => {
    const { status, body } = await get("/v1/agents/a/tool-calls");
    expect(status).toBe(200);
    expect(body.data?.agent).toBe("a");
    expect(body.data?.calls).toMatchObject([
      {
        tool: "file.list",
        traceId: "tr-2",
        outcome: "failed",
        errorCode: "PATH_NOT_FOUND",
        outcomeText: "PATH_NOT_FOUND 1 ms",
      },
      {
        tool: "shell.exec",
        traceId: "tr-1",
        ok: null,
        outcome: "unknown",
        outcomeText: "outcome unknown (the bot stopped)",
        args: '{"tool":"shell.exec"}',
      },
      { tool: "file.read", traceId: "tr-1", ok: 1, outcome: "ok", outcomeText: "ok 4 ms, 10 bytes" },
    ]);
  });

  it("one trace's calls in order, only the agent's, and at most `limit`", async () => {
    const trace = await get("/v1/agents/a/tool-calls?trace=tr-1");
    expect(trace.body.data?.calls.map((call) => call.tool)).toEqual(["file.read", "shell.exec"]);
    const limited = await get("/v1/agents/a/tool-calls?limit=1");
    expect(limited.body.data?.calls.map((call) => call.tool)).toEqual(["file.list"]);
  });

  it("refuses a bad limit and an unknown agent", async () => {
    expect(await get("/v1/agents/a/tool-calls?limit=0")).toMatchObject({
      status: 400,
      body: { ok: false, error: { code: "INVALID_REQUEST" } },
    });
    expect(await get("/v1/agents/zz/tool-calls")).toMatchObject({
      status: 404,
      body: { ok: false, error: { code: "AGENT_NOT_FOUND" } },
    });
  });
});
