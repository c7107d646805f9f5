import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../../src/agent/distillation/lesson-rules.js";
import { openStore } from "../../src/store/store.js";
import { runLaoding } from "../helpers/cli.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

async function workspaceWithLessons() {
  const repoRoot = fakeRepo();
  const workspaceDir = join(tempDir(), "rt");
  await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  const store = await openStore(join(workspaceDir, "data", "laoding.db"), { now: () => Date.now() });
  const summary = "Pass --force-tls when you deploy the gateway; it rejects plain connections.";
  const lesson = await store.experiences.add({
    agentId: "main",
    source: "error_correction",
    summary,
    category: "pitfall",
    confidence: 0.5,
    createdBy: "distiller",
    contentHash: contentHash(summary),
    tags: ["deploy", "gateway"],
  });
  const settle = async (trace: string, arm: "treatment" | "holdout", outcome: "success" | "failure") => {
    await store.injections.record("main", trace, arm, [lesson.id]);
    if (arm === "treatment") await store.injections.cite(trace, [lesson.id]);
    await store.injections.settle(trace, outcome);
    await store.distillRuns.record({
      agentId: "main",
      traceId: trace,
      promptVersion: 1,
      status: "skipped",
      skipReason: "a routine success",
      outcome,
      tags: ["deploy", "gateway"],
    });
  };
  for (let index = 0; index < 20; index += 1)
    await settle(`t${index}`, "treatment", index < 18 ? "success" : "failure");
  for (let index = 0; index < 10; index += 1) await settle(`h${index}`, "holdout", index < 3 ? "success" : "failure");
  await store.close();
  return { repoRoot, workspaceDir };
}

describe("laoding experiences", () => {
  it("reports treatment vs holdout with a 95% interval, and says 'insufficient data' for small groups", async () => {
    const { repoRoot, workspaceDir } = await workspaceWithLessons();
    const run = await runLaoding(["experiences", "report", "--json", "--workspace", workspaceDir], { repoRoot });
    expect(run.stderr).toBe("");
    const [report] = JSON.parse(run.stdout) as [
      {
        overall: { effect: number; interval: [number, number]; verdict: string; treatment: { n: number } };
        byTag: { tag: string }[];
        lessons: { comparison: { verdict: string }; adoption: number }[];
        created: number;
      },
    ];
    expect(report.overall).toMatchObject({ effect: 0.6, verdict: "helps", treatment: { n: 20 } });
    expect(report.overall.interval[0]).toBeGreaterThan(0.25);
    expect(report.byTag.map((tag) => tag.tag)).toEqual(["deploy", "gateway"]);
    expect(report.lessons[0]).toMatchObject({ adoption: 1, comparison: { verdict: "helps" } });
    expect(report.created).toBe(1);
    const text = await runLaoding(["experiences", "report", "--workspace", workspaceDir], { repoRoot });
    expect(text.stdout).toMatch(
      /overall: treatment 90% \(n=20\) · holdout 30% \(n=10\) · effect \+60 pts \[\+\d+(\.\d)? pts, \+\d+(\.\d)? pts\] helps/,
    );
  });

  it("deprecates, restores and pins with every change in the ledger", async () => {
    const { repoRoot, workspaceDir } = await workspaceWithLessons();
    const cli = (...args: string[]) => runLaoding(["experiences", ...args, "--workspace", workspaceDir], { repoRoot });
    expect((await cli("list")).stdout).toMatch(/exp-000001 \[draft\] main · pitfall/);
    expect((await cli("deprecate", "exp-1", "--reason", "wrong flag")).stdout).toMatch(/deprecated exp-000001/);
    expect((await cli("list", "--status", "deprecated")).stdout).toMatch(/exp-000001 \[deprecated\]/);
    expect((await cli("deprecate", "exp-1")).code).toBe(1);
    expect((await cli("restore", "exp-000001")).stdout).toMatch(/restored exp-000001 as a draft/);
    expect((await cli("pin", "exp-1")).stdout).toMatch(/pinned/);
    const show = await cli("show", "exp-1");
    expect(show.stdout).toMatch(
      /create by distiller[\s\S]*deprecate by operator: wrong flag[\s\S]*restore by operator[\s\S]*pin by operator/,
    );
    // What the lifecycle judges by is there too: uses and their outcomes, and each injection.
    expect(show.stdout).toMatch(
      /since its last status change: used \d+ · succeeded \d+ · cited uses that succeeded \d+/,
    );
    expect(show.stdout).toMatch(/injections \(latest \d+ of \d+\):/);
    expect((await cli("show", "exp-99")).stderr).toMatch(/no lesson "exp-99"/);
    expect((await cli("curate")).stdout).toMatch(/agent main: no changes/);
    expect((await cli("distill", "Deploy")).stdout).toMatch(
      /request 1 queued for main: the running bot distils "deploy"/,
    );
    expect((await cli("skills")).stdout).toMatch(/request 1 "deploy": waiting for the running bot/);
  });
});

describe("laoding rules", () => {
  it("proposes a well-evidenced lesson with its evidence, accepts it (at most 300 characters), lists and removes it", async () => {
    const { repoRoot, workspaceDir } = await workspaceWithLessons();
    const store = await openStore(join(workspaceDir, "data", "laoding.db"), { now: () => Date.now() });
    await store.experiences.change(1, { status: "active" }, { action: "promote", actor: "test" });
    for (let index = 0; index < 6; index += 1) {
      await store.injections.record("main", `p${index}`, "treatment", [1]);
      await store.injections.cite(`p${index}`, [1]);
      await store.injections.settle(`p${index}`, "success");
    }
    await store.close();
    const cli = (...args: string[]) => runLaoding(["rules", ...args, "--workspace", workspaceDir], { repoRoot });
    const proposed = await cli("propose");
    expect(proposed.stdout).toMatch(
      /exp-000001: Pass --force-tls[\s\S]*evidence: shown to 6 tasks, 6 succeeded \(cited in 6\)/,
    );
    expect((await cli("accept", "exp-000001", "--text", "x".repeat(301))).stderr).toMatch(/1-300 characters/);
    // The operator's own wording passes the lesson gate's check too: hidden text is invisible to them.
    expect((await cli("accept", "exp-000001", "--text", "Pass --force-tls\u{E0100}")).stderr).toMatch(
      /rule refused: it contains U\+E0100/,
    );
    expect((await cli("accept", "exp-000001")).stdout).toMatch(/rule 1 accepted for main/);
    expect((await cli("list")).stdout).toMatch(/1\. Pass --force-tls .* \(from exp-000001\)/);
    expect((await cli("propose")).stdout).toMatch(/no candidates yet/);
    expect((await cli("remove", "1")).stdout).toMatch(/rule 1 removed/);
    expect((await cli("list")).stdout).toMatch(/no rules/);
  });
});
