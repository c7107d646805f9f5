import { describe, expect, it } from "vitest";
import { RuleError } from "../../src/store/rules-store.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../helpers/test-store.js";
import type { Store } from "../../src/store/store.js";

function testClock() {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

const lesson = (hash: string) => ({
  agentId: "main",
  source: "task_completion" as const,
  summary: `Lesson ${hash}: check the exit code before reading the output file.`,
  category: "best_practice" as const,
  confidence: 0.75,
  createdBy: "distiller",
  contentHash: hash,
  tags: [],
});

async function withStore(
  engine: Engine,
  test: (store: Store, clock: ReturnType<typeof testClock>) => Promise<void>,
): Promise<void> {
  const clock = testClock();
  const store = await openTestStore(engine, { clock });
  try {
    await test(store, clock);
  } finally {
    await store.close();
  }
}

describe.each(STORE_ENGINES)("learning repositories on %s", (engine) => {
  describe("injections", () => {
    it("records lessons in rank order once per task, cites only treatment rows that exist, and settles every row of a task", () =>
      withStore(engine, async (s, clock) => {
        const [a, b, c] = [
          await s.experiences.add(lesson("a")),
          await s.experiences.add(lesson("b")),
          await s.experiences.add(lesson("c")),
        ] as const;
        await s.injections.record("main", "tr-1", "treatment", [b.id, a.id]);
        // The same lesson for the same task again is ignored: its first row (rank 1) stays.
        await s.injections.record("main", "tr-1", "treatment", [b.id]);
        clock.advance(10);
        await s.injections.record("main", "tr-2", "holdout", [a.id]);
        expect(
          (await s.injections.byTrace("tr-1")).map((row) => [row.experienceId, row.rank, row.cited, row.outcome]),
        ).toEqual([
          [b.id, 1, 0, null],
          [a.id, 2, 0, null],
        ]);
        // c was never injected, and tr-2's row is a holdout: neither is cited.
        expect(await s.injections.cite("tr-1", [a.id, c.id])).toEqual([a.id]);
        expect(await s.injections.cite("tr-2", [a.id])).toEqual([]);
        expect(await s.injections.cite("tr-9", [a.id])).toEqual([]);
        expect((await s.injections.byTrace("tr-1")).map((row) => row.cited)).toEqual([0, 1]);
        await s.injections.settle("tr-1", "failure");
        expect((await s.injections.byTrace("tr-1")).map((row) => row.outcome)).toEqual(["failure", "failure"]);
        expect((await s.injections.byTrace("tr-2"))[0]?.outcome).toBeNull();
        expect((await s.injections.byExperience(a.id)).map((row) => [row.traceId, row.arm])).toEqual([
          ["tr-1", "treatment"],
          ["tr-2", "holdout"],
        ]);
        expect((await s.injections.byAgent("main")).map((row) => row.traceId)).toEqual(["tr-1", "tr-1", "tr-2"]);
        expect((await s.injections.byAgent("main", 1_700_000_000_005)).map((row) => row.traceId)).toEqual(["tr-2"]);
        expect(await s.injections.byAgent("ops")).toEqual([]);
      }));

    it("lists each settled holdout task once, with the tags of its distill run, in the order the tasks were injected", () =>
      withStore(engine, async (s) => {
        const [a, b] = [await s.experiences.add(lesson("a")), await s.experiences.add(lesson("b"))] as const;
        await s.injections.record("main", "tr-2", "holdout", [a.id, b.id]);
        await s.injections.record("main", "tr-1", "holdout", [a.id]);
        await s.injections.record("main", "tr-3", "holdout", [b.id]);
        await s.injections.record("main", "tr-4", "treatment", [a.id]);
        await s.injections.settle("tr-2", "success");
        await s.injections.settle("tr-1", "failure");
        await s.injections.settle("tr-4", "success");
        await s.distillRuns.record({
          agentId: "main",
          traceId: "tr-2",
          promptVersion: 1,
          status: "skipped",
          outcome: "success",
          tags: ["docker", "build"],
        });
        expect(await s.injections.holdoutTasks("main")).toEqual([
          { traceId: "tr-2", outcome: "success", tags: ["docker", "build"] },
          { traceId: "tr-1", outcome: "failure", tags: [] },
        ]);
        expect(await s.injections.holdoutTasks("ops")).toEqual([]);
      }));
  });

  describe("distill runs", () => {
    it("keeps one row per task and prompt version: a second record updates it, another prompt version adds one", () =>
      withStore(engine, async (s, clock) => {
        await s.distillRuns.record({
          agentId: "main",
          traceId: "tr-1",
          promptVersion: 1,
          status: "failed",
          source: "error_correction",
          outcome: "failure",
          tags: ["a", "b"],
          phantomCitations: 2,
          tokens: 10,
        });
        clock.advance(100);
        await s.distillRuns.record({
          agentId: "main",
          traceId: "tr-1",
          promptVersion: 1,
          status: "distilled",
          outcome: "success",
          tags: ["c"],
          operations: 3,
          refused: 1,
          tokens: 700,
        });
        await s.distillRuns.record({
          agentId: "main",
          traceId: "tr-1",
          promptVersion: 2,
          status: "skipped",
          skipReason: "routine success",
          outcome: "success",
          tags: [],
        });
        const first = await s.distillRuns.get("tr-1", 1);
        // The idempotency key's row keeps its tags, phantom citations and time; the rest is the latest run's.
        expect(first).toMatchObject({
          agentId: "main",
          status: "distilled",
          skipReason: null,
          source: null,
          outcome: "success",
          tags: "a b",
          operations: 3,
          refused: 1,
          phantomCitations: 2,
          tokens: 700,
          createdAt: 1_700_000_000_000,
        });
        expect(await s.distillRuns.get("tr-1", 2)).toMatchObject({
          status: "skipped",
          skipReason: "routine success",
          tags: "",
          operations: 0,
          createdAt: 1_700_000_000_100,
        });
        expect(await s.distillRuns.get("tr-1", 3)).toBeUndefined();
        expect((await s.distillRuns.byAgent("main")).map((row) => row.promptVersion)).toEqual([1, 2]);
        expect((await s.distillRuns.byAgent("main", 1_700_000_000_050)).map((row) => row.promptVersion)).toEqual([2]);
      }));
  });

  describe("ledger", () => {
    it("appends entries with before and after as JSON and returns their ids, read back by subject and by agent since a time", () =>
      withStore(engine, async (s, clock) => {
        const first = await s.ledger.append({
          agentId: "main",
          subject: "rule",
          subjectId: "7",
          action: "accept",
          after: { text: "Be brief.", n: 1.5 },
          actor: "alice",
        });
        clock.advance(1_000);
        const second = await s.ledger.append({
          agentId: "main",
          subject: "rule",
          subjectId: "7",
          action: "remove",
          before: { text: "Be brief." },
          after: null,
          reason: "obsolete",
          actor: "bob",
        });
        const other = await s.ledger.append({
          agentId: "ops",
          subject: "skill",
          subjectId: "deploy@v1",
          action: "candidate",
          actor: "distiller",
        });
        expect(second).toBeGreaterThan(first);
        expect(other).toBeGreaterThan(second);
        const rows = await s.ledger.bySubject("rule", "7");
        expect(rows).toEqual([
          {
            id: first,
            agentId: "main",
            subject: "rule",
            subjectId: "7",
            action: "accept",
            before: null,
            after: '{"text":"Be brief.","n":1.5}',
            reason: null,
            actor: "alice",
            createdAt: 1_700_000_000_000,
          },
          {
            id: second,
            agentId: "main",
            subject: "rule",
            subjectId: "7",
            action: "remove",
            before: '{"text":"Be brief."}',
            after: "null",
            reason: "obsolete",
            actor: "bob",
            createdAt: 1_700_000_001_000,
          },
        ]);
        expect(await s.ledger.bySubject("skill", "7")).toEqual([]);
        expect((await s.ledger.byAgent("main", 1_700_000_000_500)).map((row) => row.id)).toEqual([second]);
        expect((await s.ledger.byAgent("ops")).map((row) => row.subjectId)).toEqual(["deploy@v1"]);
      }));
  });

  describe("rules", () => {
    it("adds rules with their whitespace folded, at most five active and each at most 300 characters, and ledgers every change", () =>
      withStore(engine, async (s) => {
        const first = await s.rules.add("main", "  Answer   in\nEnglish. ", "operator", "alice");
        expect(first).toMatchObject({
          agentId: "main",
          text: "Answer in English.",
          status: "active",
          source: "operator",
        });
        await expect(s.rules.add("main", "Answer in English.", "operator", "alice")).rejects.toThrow(
          "the same rule is active already",
        );
        await expect(s.rules.add("main", "   ", "operator", "alice")).rejects.toThrow(RuleError);
        // Characters, not bytes: 300 CJK characters fit, 301 do not.
        const cjk = await s.rules.add("main", "短".repeat(300), "operator", "alice");
        expect([...cjk.text]).toHaveLength(300);
        await expect(s.rules.add("main", "短".repeat(301), "operator", "alice")).rejects.toThrow("this one has 301");
        for (const n of [3, 4, 5]) await s.rules.add("main", `Rule number ${n}.`, "operator", "alice");
        await expect(s.rules.add("main", "Rule number 6.", "operator", "alice")).rejects.toThrow(
          "agent main already has 5 rules",
        );
        // Another agent has its own five.
        await s.rules.add("ops", "Rule number 6.", "operator", "alice");
        expect(await s.rules.active("main")).toHaveLength(5);

        const removed = await s.rules.remove(first.id, "bob");
        expect(removed).toMatchObject({ id: first.id, status: "removed" });
        await expect(s.rules.remove(first.id, "bob")).rejects.toThrow(`no active rule ${first.id}`);
        await expect(s.rules.remove(9_999, "bob")).rejects.toThrow(RuleError);
        const sixth = await s.rules.add("main", "Rule number 6.", "operator", "alice");
        expect((await s.rules.active("main")).map((rule) => rule.id)).not.toContain(first.id);
        expect(await s.rules.active("main")).toHaveLength(5);
        expect((await s.rules.list("main")).map((rule) => rule.status)).toEqual([
          "removed",
          "active",
          "active",
          "active",
          "active",
          "active",
        ]);
        expect(await s.rules.get(sixth.id)).toEqual(sixth);
        expect((await s.ledger.bySubject("rule", String(first.id))).map((row) => [row.action, row.actor])).toEqual([
          ["accept", "alice"],
          ["remove", "bob"],
        ]);
        // A refused add wrote nothing: main has five accepts and one removal in the ledger.
        expect((await s.ledger.byAgent("main")).map((row) => row.action).sort()).toEqual([
          "accept",
          "accept",
          "accept",
          "accept",
          "accept",
          "accept",
          "remove",
        ]);
      }));
  });

  describe("skill versions", () => {
    it("numbers versions per skill, changes status with a ledgered before and after, and counts trial uses", () =>
      withStore(engine, async (s, clock) => {
        const v1 = await s.skillVersions.add({
          agentId: "main",
          skillName: "docker-build",
          tag: "docker",
          content: "# v1",
          bullets: 3,
          actor: "distiller",
        });
        const v2 = await s.skillVersions.add({
          agentId: "main",
          skillName: "docker-build",
          tag: "docker",
          content: "# v2",
          bullets: 4,
          actor: "distiller",
        });
        const other = await s.skillVersions.add({
          agentId: "main",
          skillName: "apt",
          tag: "apt",
          content: "# apt",
          bullets: 1,
          actor: "distiller",
        });
        expect([v1.version, v2.version, other.version]).toEqual([1, 2, 1]);
        expect(v2).toMatchObject({
          status: "candidate",
          baselineRate: null,
          trialUses: 0,
          trialSuccesses: 0,
          content: "# v2",
          bullets: 4,
        });
        expect(await s.skillVersions.active("main", "docker-build")).toBeUndefined();

        clock.advance(1_000);
        const activated = await s.skillVersions.setStatus(
          v2.id,
          "active",
          { action: "activate", reason: "ratchet passed", actor: "ratchet" },
          { baselineRate: 0.625 },
        );
        expect(activated).toMatchObject({ status: "active", baselineRate: 0.625, updatedAt: 1_700_000_001_000 });
        expect(await s.skillVersions.recordTrialUse(v2.id, true)).toMatchObject({ trialUses: 1, trialSuccesses: 1 });
        expect(await s.skillVersions.recordTrialUse(v2.id, false)).toMatchObject({ trialUses: 2, trialSuccesses: 1 });
        expect((await s.skillVersions.active("main", "docker-build"))?.id).toBe(v2.id);
        // Without a reset the trial counters stay.
        expect(
          await s.skillVersions.setStatus(v2.id, "rolled_back", {
            action: "rollback",
            reason: "worse than baseline",
            actor: "ratchet",
          }),
        ).toMatchObject({ status: "rolled_back", trialUses: 2, baselineRate: 0.625 });
        await expect(
          s.skillVersions.setStatus(9_999, "active", { action: "activate", reason: "x", actor: "x" }),
        ).rejects.toThrow("no skill version 9999");

        expect((await s.skillVersions.versions("main", "docker-build")).map((row) => row.version)).toEqual([1, 2]);
        expect((await s.skillVersions.all("main")).map((row) => `${row.skillName}@v${row.version}`)).toEqual([
          "apt@v1",
          "docker-build@v1",
          "docker-build@v2",
        ]);
        expect(await s.skillVersions.get(v1.id)).toEqual(v1);
        const ledger = await s.ledger.bySubject("skill", "docker-build@v2");
        expect(ledger.map((row) => [row.action, row.reason])).toEqual([
          ["candidate", null],
          ["activate", "ratchet passed"],
          ["rollback", "worse than baseline"],
        ]);
        expect(JSON.parse(ledger[1]?.before ?? "{}")).toMatchObject({ status: "candidate", baselineRate: null });
        expect(JSON.parse(ledger[2]?.before ?? "{}")).toMatchObject({
          status: "active",
          trialUses: 2,
          trialSuccesses: 1,
        });
      }));

    it("queues distill requests for the running bot and marks them handled", () =>
      withStore(engine, async (s, clock) => {
        const first = await s.skillVersions.requestDistill("main", "docker");
        const second = await s.skillVersions.requestDistill("ops", "apt");
        expect(second).toBeGreaterThan(first);
        expect(await s.skillVersions.pendingRequests()).toEqual([
          { id: first, agentId: "main", tag: "docker" },
          { id: second, agentId: "ops", tag: "apt" },
        ]);
        clock.advance(60_000);
        await s.skillVersions.handleRequest(first, "distilled v1");
        expect(await s.skillVersions.pendingRequests()).toEqual([{ id: second, agentId: "ops", tag: "apt" }]);
        expect(await s.skillVersions.requests("main")).toEqual([
          {
            id: first,
            tag: "docker",
            requestedAt: 1_700_000_000_000,
            handledAt: 1_700_000_060_000,
            outcome: "distilled v1",
          },
        ]);
        // Every replica's timer sees a pending request; one claim wins, and it is no longer pending.
        const claims = await Promise.all([1, 2, 3].map(() => s.skillVersions.claimRequest(second)));
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(await s.skillVersions.pendingRequests()).toEqual([]);
        expect(await s.skillVersions.claimRequest(second)).toBe(false);
      }));
  });
});
