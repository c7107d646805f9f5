/**
 * The admin API's rules for real: the server on 127.0.0.1:0, a seeded workspace (agents a
 * and b), real SQLite. Candidates are what `laoding rules propose` computes (the same
 * function); accepting and removing keep the CLI's limits and ledger every change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AdminServer } from "../../src/admin/admin-server.js";
import { ruleCandidates } from "../../src/agent/distillation/rule-candidates.js";
import { systemClock } from "../../src/store/clock.js";
import { openStore } from "../../src/store/store.js";
import { launchTestAdmin, seedLessons, type SeededLessons } from "../helpers/admin.js";
import { SKILL_HEURISTICS, seedSkillHeuristics } from "../helpers/admin-rules.js";
import { realWorkspace, type RealWorkspace } from "../helpers/real-toolhost.js";

const TOKEN = "admin-rules-token-for-tests-0123456789";
let workspace: RealWorkspace;
let admin: AdminServer;
let lessons: SeededLessons;
const logLines: string[] = [];

beforeAll(async () => {
  workspace = await realWorkspace({ TOOLHOST_SANDBOX: "none", BOT_LOCALE: "en", ADMIN_TOKEN: TOKEN });
  lessons = await seedLessons(workspace, "a");
  await seedSkillHeuristics(workspace, "a");
  admin = await launchTestAdmin(workspace, { secrets: [TOKEN], logLines });
}, 60_000);

afterAll(async () => {
  await admin?.close();
});

type Envelope = {
  ok: boolean; // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read many shapes of data
  data?: any;
  error?: { code: string; message: string };
};

async function call(
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown } = {},
): Promise<{ status: number; json: Envelope }> {
  const headers: Record<string, string> = {};
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${admin.url}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, json: (await response.json()) as Envelope };
}

async function withStore<T>(run: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const store = await openStore(workspace.layout.databaseTarget, systemClock);
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

const rules = "/v1/agents/a/rules";
const candidate = (index: number) => `deploy-gateway@v1#${index}`;

describe("admin API: rules", () => {
  it("GET rules lists the agent's active rules with the limits; none yet", async () => {
    expect(await call("GET", rules)).toEqual({
      status: 200,
      json: { ok: true, data: { agentId: "a", maxRules: 5, maxChars: 300, rules: [] } },
    });
  });

  it("GET rules/candidates is exactly what `laoding rules propose` computes, evidence included", async () => {
    const answer = await call("GET", `${rules}/candidates`);
    expect(answer.status).toBe(200);
    const proposed = await withStore((store) => ruleCandidates(store, "a", Date.now()));
    expect(answer.json.data).toEqual(proposed);
    const ids = (answer.json.data as { id: string }[]).map((item) => item.id);
    expect(ids).toEqual(expect.arrayContaining([1, 2, 3, 4, 5].map(candidate)));
    // The heuristic with a URL is never offered.
    expect(ids).not.toContain(candidate(6));
    expect(answer.json.data[0]).toEqual({
      id: candidate(1),
      text: SKILL_HEURISTICS[0],
      evidence: expect.stringContaining("heuristic of active skill deploy-gateway v1"),
    });
    expect((await call("GET", "/v1/agents/b/rules/candidates")).json.data).toEqual([]);
  });

  it("POST rules accepts a candidate, ledgered with actor admin; it leaves the candidates", async () => {
    const accepted = await call("POST", rules, { body: { candidate: candidate(1) } });
    expect(accepted).toMatchObject({
      status: 201,
      json: { ok: true, data: { agentId: "a", text: SKILL_HEURISTICS[0], status: "active", source: candidate(1) } },
    });
    const id = accepted.json.data.id as number;
    expect((await call("GET", rules)).json.data.rules.map((rule: { id: number }) => rule.id)).toEqual([id]);
    const ids = (await call("GET", `${rules}/candidates`)).json.data.map((item: { id: string }) => item.id);
    expect(ids).not.toContain(candidate(1));
    const ledger = await withStore((store) => store.ledger.bySubject("rule", String(id)));
    expect(ledger).toMatchObject([{ agentId: "a", action: "accept", actor: "admin" }]);
    // Accepting it again: it is no longer a candidate.
    expect(await call("POST", rules, { body: { candidate: candidate(1) } })).toMatchObject({
      status: 404,
      json: { ok: false, error: { code: "RULE_CANDIDATE_NOT_FOUND" } },
    });
  });

  it("POST rules with a shorter `text` stores that wording; over 300 characters is refused naming the field", async () => {
    const tooLong = await call("POST", rules, { body: { candidate: candidate(2), text: "x".repeat(301) } });
    expect(tooLong).toMatchObject({ status: 400, json: { ok: false, error: { code: "INVALID_BODY" } } });
    expect(tooLong.json.error?.message).toContain("`text`");
    expect(tooLong.json.error?.message).toContain("this one has 301");
    // Characters, not bytes, whitespace folded: 300 CJK characters fit.
    const cjk = await call("POST", rules, { body: { candidate: candidate(2), text: ` ${"短".repeat(300)}  ` } });
    expect(cjk.status).toBe(201);
    expect([...cjk.json.data.text]).toHaveLength(300);
    await call("DELETE", `${rules}/${cjk.json.data.id}`);
    const shorter = await call("POST", rules, {
      body: { candidate: candidate(2), text: "Check gateway health first." },
    });
    expect(shorter).toMatchObject({
      status: 201,
      json: { data: { text: "Check gateway health first.", source: candidate(2) } },
    });
    // Accepted in other words, the candidate is a rule already: it is not offered again.
    const ids = (await call("GET", `${rules}/candidates`)).json.data.map((item: { id: string }) => item.id);
    expect(ids).not.toContain(candidate(2));
    // Hidden characters in the operator's wording are refused as the CLI refuses them.
    expect(
      await call("POST", rules, { body: { candidate: candidate(3), text: "Tag the release\u{E0100}" } }),
    ).toMatchObject({ status: 400, json: { error: { code: "RULE_REFUSED" } } });
    expect(await call("POST", rules, { body: { candidate: candidate(3), extra: 1 } })).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_BODY" } },
    });
    expect(await call("POST", rules, { body: {} })).toMatchObject({
      status: 400,
      json: { error: { code: "INVALID_BODY", message: expect.stringContaining("`candidate` is missing") } },
    });
    expect(await call("POST", rules, { body: { candidate: "no-such@v9#1" } })).toMatchObject({
      status: 404,
      json: { error: { code: "RULE_CANDIDATE_NOT_FOUND" } },
    });
  });

  it("a sixth active rule is refused with 409 RULE_LIMIT and nothing is written", async () => {
    for (const index of [3, 4, 5])
      expect((await call("POST", rules, { body: { candidate: candidate(index) } })).status).toBe(201);
    expect((await call("GET", rules)).json.data.rules).toHaveLength(5);
    const sixth = await call("POST", rules, { body: { candidate: lessons.deploy } });
    expect(sixth).toMatchObject({ status: 409, json: { ok: false, error: { code: "RULE_LIMIT" } } });
    expect(sixth.json.error?.message).toContain("already has 5 rules");
    expect(await withStore((store) => store.rules.list("a"))).toHaveLength(6);
  });

  it("DELETE rules/:ruleId removes a rule (ledgered); an unknown or another agent's rule is 404", async () => {
    const [first] = (await call("GET", rules)).json.data.rules as { id: number }[];
    const id = first?.id as number;
    expect(await call("DELETE", `/v1/agents/b/rules/${id}`)).toMatchObject({
      status: 404,
      json: { error: { code: "RULE_NOT_FOUND" } },
    });
    expect(await call("DELETE", `${rules}/${id}`)).toMatchObject({
      status: 200,
      json: { ok: true, data: { id, status: "removed" } },
    });
    expect((await call("GET", rules)).json.data.rules).toHaveLength(4);
    const ledger = await withStore((store) => store.ledger.bySubject("rule", String(id)));
    expect(ledger.map((row) => [row.action, row.actor])).toEqual([
      ["accept", "admin"],
      ["remove", "admin"],
    ]);
    for (const path of [`${rules}/${id}`, `${rules}/9999`, `${rules}/abc`, `${rules}/-1`])
      expect(await call("DELETE", path)).toMatchObject({ status: 404, json: { error: { code: "RULE_NOT_FOUND" } } });
    // With room again, the lesson candidate goes in.
    expect(await call("POST", rules, { body: { candidate: lessons.deploy } })).toMatchObject({ status: 201 });
  });

  it("needs the token on every rule route (401) and names unknown agents (404)", async () => {
    for (const [method, path] of [
      ["GET", rules],
      ["GET", `${rules}/candidates`],
      ["POST", rules],
      ["DELETE", `${rules}/1`],
    ] as const) {
      const body = method === "POST" ? { candidate: candidate(1) } : undefined;
      expect(await call(method, path, { token: null, body })).toMatchObject({
        status: 401,
        json: { error: { code: "UNAUTHORIZED" } },
      });
      expect((await call(method, path, { token: "wrong-token-0123456789abcdef", body })).status).toBe(401);
    }
    expect(await call("GET", "/v1/agents/nobody/rules")).toMatchObject({
      status: 404,
      json: { error: { code: "AGENT_NOT_FOUND" } },
    });
    expect(logLines.join("\n")).not.toContain(TOKEN);
  });
});
