import { describe, expect, it } from "vitest";
import { formatExperienceId, parseExperienceId } from "../../src/store/experiences-store.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../helpers/test-store.js";

async function store(engine: Engine) {
  let now = 1_700_000_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  return { store: await openTestStore(engine, { clock }), clock };
}

const lesson = {
  agentId: "main",
  source: "error_correction" as const,
  summary: "Pass --no-cache to the build script; cached layers hide the fix.",
  category: "pitfall" as const,
  confidence: 0.5,
  createdBy: "distiller",
  contentHash: "h1",
  tags: ["build", "docker"],
};

describe.each(STORE_ENGINES)("experiences store (migration 6) on %s", (engine) => {
  it("stores a lesson as a draft with tags and ledgers its creation and every change with before and after", async () => {
    const { store: s, clock } = await store(engine);
    try {
      const created = await s.experiences.add(lesson);
      expect(created).toMatchObject({
        status: "draft",
        tags: ["build", "docker"],
        supportCount: 1,
        confidence: 0.5,
        createdAt: 1_700_000_000_000,
      });
      clock.advance(1_000);
      await s.experiences.change(
        created.id,
        { status: "active" },
        { action: "promote", reason: "cited in 2 tasks", actor: "lifecycle" },
      );
      const ledger = await s.ledger.bySubject("experience", formatExperienceId(created.id));
      expect(ledger.map((row) => row.action)).toEqual(["create", "promote"]);
      expect(JSON.parse(ledger[1]?.before ?? "{}")).toMatchObject({ status: "draft" });
      expect(JSON.parse(ledger[1]?.after ?? "{}")).toMatchObject({ status: "active" });
      expect(ledger[1]?.createdAt).toBe(1_700_000_001_000);
      expect((await s.experiences.get(created.id))?.updatedAt).toBe(1_700_000_001_000);
    } finally {
      await s.close();
    }
  });

  it("refuses a second lesson with the same content hash and summaries outside 20-200 characters", async () => {
    const { store: s } = await store(engine);
    try {
      await s.experiences.add(lesson);
      await expect(s.experiences.add(lesson)).rejects.toThrow(engine === "sqlite" ? /UNIQUE/ : /unique/);
      await expect(s.experiences.add({ ...lesson, contentHash: "h2", summary: "too short" })).rejects.toThrow(
        engine === "sqlite" ? /CHECK/ : /check constraint/,
      );
      expect(await s.ledger.byAgent("main")).toHaveLength(1);
      expect(await s.experiences.list("main")).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it("cites only lessons that were injected as treatment, and settles a task's outcome on all its rows", async () => {
    const { store: s } = await store(engine);
    try {
      const a = await s.experiences.add(lesson);
      const b = await s.experiences.add({
        ...lesson,
        contentHash: "h2",
        summary: "Read the config before editing it; defaults differ per host.",
      });
      await s.injections.record("main", "tr-1", "treatment", [a.id]);
      await s.injections.record("main", "tr-2", "holdout", [b.id]);
      expect(await s.injections.cite("tr-1", [a.id, b.id])).toEqual([a.id]);
      expect(await s.injections.cite("tr-2", [b.id])).toEqual([]);
      await s.injections.settle("tr-1", "success");
      expect(await s.injections.byTrace("tr-1")).toMatchObject([
        { experienceId: a.id, rank: 1, arm: "treatment", cited: 1, outcome: "success" },
      ]);
    } finally {
      await s.close();
    }
  });

  it("keeps one distill run per task and prompt version", async () => {
    const { store: s } = await store(engine);
    try {
      await s.distillRuns.record({
        agentId: "main",
        traceId: "tr-1",
        promptVersion: 1,
        status: "skipped",
        skipReason: "routine success",
        outcome: "success",
        tags: ["x"],
      });
      await s.distillRuns.record({
        agentId: "main",
        traceId: "tr-1",
        promptVersion: 1,
        status: "distilled",
        outcome: "success",
        tags: ["x"],
        operations: 1,
      });
      expect(await s.distillRuns.byAgent("main")).toMatchObject([
        { status: "distilled", operations: 1, skipReason: null },
      ]);
    } finally {
      await s.close();
    }
  });

  it("lists lessons by status with their tags, counts injections and uses, and names the agents that have lessons", async () => {
    const { store: s, clock } = await store(engine);
    try {
      const a = await s.experiences.add(lesson);
      const b = await s.experiences.add({
        ...lesson,
        contentHash: "h2",
        status: "active",
        tags: ["config"],
        summary: "Read the config before editing it; defaults differ per host.",
      });
      await s.experiences.add({ ...lesson, agentId: "ops", contentHash: "h3", tags: [] });
      expect((await s.experiences.list("main")).map((row) => [row.id, row.tags])).toEqual([
        [a.id, ["build", "docker"]],
        [b.id, ["config"]],
      ]);
      expect((await s.experiences.list("main", "active")).map((row) => row.id)).toEqual([b.id]);
      expect(await s.experiences.agents()).toEqual(["main", "ops"]);
      expect(await s.experiences.byHash("main", "h2")).toMatchObject({ id: b.id, tags: ["config"] });
      expect(await s.experiences.byHash("ops", "h2")).toBeUndefined();
      await s.experiences.countInjected(a.id);
      await s.experiences.countInjected(a.id);
      clock.advance(5);
      await s.experiences.countUsed(a.id);
      expect(await s.experiences.get(a.id)).toMatchObject({
        injectedCount: 2,
        usageCount: 1,
        lastUsedAt: 1_700_000_000_005,
      });
      await expect(s.experiences.change(999, { status: "active" }, { action: "promote", actor: "x" })).rejects.toThrow(
        "no lesson exp-000999",
      );
    } finally {
      await s.close();
    }
  });
});

describe("experience ids", () => {
  it("shows ids as exp-000123 and parses any digit count", () => {
    expect(formatExperienceId(123)).toBe("exp-000123");
    expect(parseExperienceId("exp-3")).toBe(3);
    expect(parseExperienceId("EXP-0000017")).toBe(17);
    expect(parseExperienceId("exp-x")).toBeUndefined();
  });
});
