import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatExperienceId, parseExperienceId } from "../../src/store/experiences-store.js";
import { openStore } from "../../src/store/store.js";
import { tempDir } from "../helpers/temp-dir.js";

function store() {
  let now = 1_700_000_000_000;
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  return { store: openStore(join(tempDir(), "laoding.db"), clock), clock };
}

const lesson = { agentId: "main", source: "error_correction" as const, summary: "Pass --no-cache to the build script; cached layers hide the fix.", category: "pitfall" as const, confidence: 0.5, createdBy: "distiller", contentHash: "h1", tags: ["build", "docker"] };

describe("experiences store (migration 6)", () => {
  it("stores a lesson as a draft with tags and ledgers its creation and every change with before and after", () => {
    const { store: s, clock } = store();
    const created = s.experiences.add(lesson);
    expect(created).toMatchObject({ status: "draft", tags: ["build", "docker"], supportCount: 1, createdAt: 1_700_000_000_000 });
    clock.advance(1_000);
    s.experiences.change(created.id, { status: "active" }, { action: "promote", reason: "cited in 2 tasks", actor: "lifecycle" });
    const ledger = s.ledger.bySubject("experience", formatExperienceId(created.id));
    expect(ledger.map((row) => row.action)).toEqual(["create", "promote"]);
    expect(JSON.parse(ledger[1]?.before ?? "{}")).toMatchObject({ status: "draft" });
    expect(JSON.parse(ledger[1]?.after ?? "{}")).toMatchObject({ status: "active" });
    expect(ledger[1]?.createdAt).toBe(1_700_000_001_000);
    expect(s.experiences.get(created.id)?.updatedAt).toBe(1_700_000_001_000);
  });

  it("refuses a second lesson with the same content hash and summaries outside 20-200 characters", () => {
    const { store: s } = store();
    s.experiences.add(lesson);
    expect(() => s.experiences.add(lesson)).toThrow(/UNIQUE/);
    expect(() => s.experiences.add({ ...lesson, contentHash: "h2", summary: "too short" })).toThrow(/CHECK/);
    expect(s.ledger.byAgent("main")).toHaveLength(1);
  });

  it("cites only lessons that were injected as treatment, and settles a task's outcome on all its rows", () => {
    const { store: s } = store();
    const a = s.experiences.add(lesson);
    const b = s.experiences.add({ ...lesson, contentHash: "h2", summary: "Read the config before editing it; defaults differ per host." });
    s.injections.record("main", "tr-1", "treatment", [a.id]);
    s.injections.record("main", "tr-2", "holdout", [b.id]);
    expect(s.injections.cite("tr-1", [a.id, b.id])).toEqual([a.id]);
    expect(s.injections.cite("tr-2", [b.id])).toEqual([]);
    s.injections.settle("tr-1", "success");
    expect(s.injections.byTrace("tr-1")).toMatchObject([{ experienceId: a.id, rank: 1, arm: "treatment", cited: 1, outcome: "success" }]);
  });

  it("keeps one distill run per task and prompt version", () => {
    const { store: s } = store();
    s.distillRuns.record({ agentId: "main", traceId: "tr-1", promptVersion: 1, status: "skipped", skipReason: "routine success", outcome: "success", tags: ["x"] });
    s.distillRuns.record({ agentId: "main", traceId: "tr-1", promptVersion: 1, status: "distilled", outcome: "success", tags: ["x"], operations: 1 });
    expect(s.distillRuns.byAgent("main")).toMatchObject([{ status: "distilled", operations: 1, skipReason: null }]);
  });

  it("shows ids as exp-000123 and parses any digit count", () => {
    expect(formatExperienceId(123)).toBe("exp-000123");
    expect(parseExperienceId("exp-3")).toBe(3);
    expect(parseExperienceId("EXP-0000017")).toBe(17);
    expect(parseExperienceId("exp-x")).toBeUndefined();
  });
});
