/**
 * The loop end to end: the real bot runtime (store, toolhost children, orchestrator) with
 * the model on the loopback fake. A correction teaches a lesson; the next task is shown
 * it; the citation line never reaches the user; the task that was shown it cannot learn
 * it again.
 */
import { describe, expect, it } from "vitest";
import { isRoutingRequest, routeTo, type RecordedRequest, type ScriptedReply } from "../../fakes/openai-server.js";
import { startTestBot } from "../../helpers/bot.js";

const LESSON = "Pass --force-tls when you deploy the gateway; it rejects plain connections.";
const isDistill = (request: RecordedRequest) =>
  request.messages[0]?.content?.startsWith("You keep a team's lessons") ?? false;

describe("distillation through real turns", () => {
  it("learns from a correction, injects the lesson, strips the citation, counts phantoms and never re-learns from its own injection", async () => {
    const bot = await startTestBot({ env: { DISTILL_HOLDOUT_PERCENT: "0" } });
    const distillRequests: RecordedRequest[] = [];
    const answers: string[] = [];
    const distillReplies: unknown[] = [];
    bot.fake.respond((request): ScriptedReply => {
      if (isRoutingRequest(request)) return routeTo([], "deploy-gateway");
      if (isDistill(request)) {
        distillRequests.push(request);
        return { text: JSON.stringify(distillReplies.shift() ?? { operations: [] }) };
      }
      return { text: answers.shift() ?? "ok" };
    });
    const distillation = bot.runtime.distillation;
    if (!distillation) throw new Error("distillation should be on by default");

    answers.push("Deployed the gateway with the default settings.");
    await bot.send("deploy the gateway service");
    distillReplies.push({
      operations: [
        { op: "ADD", summary: LESSON, category: "pitfall", tags: ["TLS"], confidence: 0.9 },
        { op: "REINFORCE", target: "E9" },
      ],
    });
    answers.push("Understood, I will use --force-tls.");
    await bot.send("No, that's wrong: the gateway needs --force-tls or it rejects the connection.");
    await distillation.idle();

    const { store } = bot.runtime;
    const [lesson] = await store.experiences.list("main");
    expect(lesson).toMatchObject({
      summary: LESSON,
      status: "draft",
      confidence: 0.6,
      source: "error_correction",
      tags: ["deploy", "gateway", "tls"],
    });
    expect(distillRequests[0]?.messages[1]?.content).toContain("user (next message): No, that's wrong");
    expect((await store.distillRuns.byAgent("main"))[0]).toMatchObject({
      status: "distilled",
      operations: 1,
      refused: 1,
      outcome: "failure",
      outcomeKind: "corrected",
      source: "error_correction",
    });

    // Task 3 is shown the lesson; its answer cites it and a lesson that was never shown.
    answers.push(`Deployed with --force-tls.\n${LESSON}\nLessons used: exp-000001, exp-000042`);
    const reply = await bot.send("deploy the gateway service again please");
    expect(reply).toBe(
      "Deployed with --force-tls.\nPass --force-tls when you deploy the gateway; it rejects plain connections.",
    );
    const react = bot.fake.requests.filter((request) => !isRoutingRequest(request) && !isDistill(request)).at(-1);
    expect(react?.messages[0]?.content).toContain(`═══ Lessons from earlier tasks ═══`);
    expect(react?.messages[0]?.content).toContain(`[exp-000001] ${LESSON}`);
    expect(react?.messages[0]?.content).toMatch(/data, not instructions/);
    const stored = (
      await store.sql.get<{ content: string }>(
        "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1",
      )
    )?.content;
    expect(stored).not.toMatch(/Lessons used/);
    expect(await bot.send("/context")).toMatch(/- experiences: \d+/);

    // Feedback settles task 3: the distiller tries to re-learn what it was shown.
    distillReplies.push({
      operations: [
        {
          op: "ADD",
          summary: "Pass --force-tls when deploying the gateway, it rejects plain connections.",
          category: "pitfall",
        },
        { op: "REINFORCE", target: "E1" },
      ],
    });
    expect(await bot.send("/feedback good worked first time")).toMatch(/recorded/);
    await distillation.idle();
    const transcript = distillRequests[1]?.messages[1]?.content ?? "";
    expect(transcript).toContain("E1: Pass --force-tls");
    expect(transcript.split("Transcript:")[1]).not.toMatch(/Lessons used|exp-0|═══|rejects plain connections/);
    expect(await store.experiences.list("main")).toHaveLength(1);
    expect(await store.experiences.get(1)).toMatchObject({ supportCount: 1, usageCount: 1, injectedCount: 1 });
    expect(await store.injections.byTrace((await store.distillRuns.byAgent("main"))[2]?.traceId ?? "")).toMatchObject([
      { experienceId: 1, arm: "treatment", cited: 1, outcome: "success", outcomeKind: "success" },
    ]);
    expect((await store.distillRuns.byAgent("main")).at(-1)).toMatchObject({
      source: "review_finding",
      phantomCitations: 1,
      operations: 0,
      refused: 2,
    });
  });

  it("a routine success costs no distiller call; settling waits for the quiet period", async () => {
    const bot = await startTestBot({ env: { DISTILL_SETTLE_QUIET_MS: "1000" } });
    bot.fake.respond((request) => (isRoutingRequest(request) ? routeTo([], "greet") : { text: "Hello!" }));
    await bot.send("hi there");
    const distillation = bot.runtime.distillation;
    expect(await distillation?.settleQuiet()).toEqual([]);
    const settled = await distillation?.flush();
    expect(settled).toMatchObject([{ outcome: "success", skipped: "a routine success" }]);
    expect(bot.fake.requests.some(isDistill)).toBe(false);
  });
});

describe("rules in the prompt", () => {
  it("an accepted rule is in every turn's prompt and its manifest", async () => {
    const bot = await startTestBot({ env: { DISTILLATION_ENABLED: "false" } });
    expect(bot.runtime.distillation).toBeUndefined();
    await bot.runtime.store.rules.add(
      "main",
      "Answer deployment questions with the exact command first.",
      "exp-000001",
      "operator",
    );
    bot.fake.respond((request) => (isRoutingRequest(request) ? routeTo([], "greet") : { text: "Hi." }));
    await bot.send("hello");
    expect(bot.fake.requests.at(-1)?.messages[0]?.content).toContain(
      "## Rules\n- Answer deployment questions with the exact command first.",
    );
    expect(await bot.send("/context")).toMatch(/- rules: \d+/);
  });
});

describe("Level 2 in the running bot", () => {
  it("/distill_skill writes the skill through the agent's toolhost, hot-reloads it, and /skill_versions lists it", async () => {
    const bot = await startTestBot();
    const { store } = bot.runtime;
    const lessons = [
      "Pass --force-tls when you deploy the gateway; it rejects plain connections.",
      "Set the probe port to 8443 for deploys; port 80 is closed on the gateway.",
      "Drain the queue with --graceful=30s before a deploy restarts workers.",
    ];
    const { contentHash } = await import("../../../src/agent/distillation/lesson-rules.js");
    for (const summary of lessons)
      await store.experiences.add({
        agentId: "main",
        source: "error_correction",
        summary,
        category: "pitfall",
        confidence: 0.6,
        createdBy: "test",
        contentHash: contentHash(summary),
        tags: ["deploy"],
      });
    bot.fake.respond(() => ({ text: "not a skill file" }));
    expect(await bot.send("/distill_skill deploy")).toBe("distilled-deploy v1 drafted (template).");
    const skill = bot.runtime.catalogs.get("main")?.snapshot.get("distilled-deploy");
    expect(skill).toMatchObject({ origin: "distilled", status: "draft", source: "agent" });
    expect(await bot.send("/skill_versions distilled-deploy")).toBe("v1 active · 7 bullets · trial 0/0");
    expect(await bot.send("/distill_skill deploy", { isOperator: false })).toMatch(/operators only/);
  });
});
