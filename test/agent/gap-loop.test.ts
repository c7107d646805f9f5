import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatClusters } from "../../src/agent/commands/gap-commands.js";
import { classifyGap } from "../../src/agent/gaps/classify-gap.js";
import { draftSkillName, gateDraft, renderDraftTemplate } from "../../src/knowledge/skill-draft.js";
import { gapLoopSetup, scriptedModel } from "../helpers/gap-loop.js";
import { STORE_ENGINES } from "../helpers/test-store.js";

const HOUR = 3_600_000;

describe("classification", () => {
  it.each([
    ["no_skill", {}, "capability"],
    ["parse_failure", {}, "capability"],
    ["step_budget", {}, "capability"],
    ["tool_failure", { errorCode: "PATH_NOT_FOUND" }, "capability"],
    ["tool_failure", { errorCode: "INVALID_ARGS" }, "capability"],
    ["tool_failure", { errorCode: "TIMEOUT" }, "environment"],
    ["tool_failure", { errorCode: "TOOLHOST_UNAVAILABLE" }, "environment"],
    ["tool_failure", { errorCode: "EXIT_NONZERO", detail: "the command exited with code 127" }, "environment"],
    ["tool_failure", { errorCode: "EXIT_NONZERO", detail: "the command exited with code 1" }, "capability"],
    ["model_failure", { errorCode: "rate_limit" }, "environment"],
  ] as const)("%s %o is %s", (reason, details, expected) => {
    expect(classifyGap(reason, details)).toBe(expected);
  });
});

describe.each(STORE_ENGINES)("drafting (%s)", (engine) => {
  it("drafts at the threshold from two sessions, with valid frontmatter and sections, and reloads the catalog", async () => {
    const { fail, ownDir, catalog, store } = await gapLoopSetup({ engine });
    expect(await fail({ session: 1, intentKey: "deploy-docker" })).toEqual([
      { action: "skipped", why: "1 of 3 events" },
    ]);
    expect(await fail({ session: 1, intentKey: "deploy-docker" })).toEqual([
      { action: "skipped", why: "2 of 3 events" },
    ]);
    const version = catalog.snapshot.version;
    const [outcome] = await fail({ session: 2, intentKey: "deploy-docker" });
    expect(outcome).toMatchObject({ action: "drafted", skillName: "auto-deploy-docker", author: "template" });
    const text = readFileSync(join(ownDir, "auto-deploy-docker", "SKILL.md"), "utf8");
    expect(gateDraft(text, { name: "auto-deploy-docker", intentKey: "deploy-docker", locale: "en" }).ok).toBe(true);
    expect(text).toMatch(
      /^---\nname: auto-deploy-docker\ndescription: .+\nstatus: draft\norigin: gap\nintent_key: deploy-docker\ncreated: 2026-11-30\n---/,
    );
    for (const section of ["Trigger background", "Procedure", "Tool suggestions", "Test suggestions"])
      expect(text).toContain(`## ${section}`);
    expect(text).toContain("please deploy docker");
    expect(catalog.snapshot.version).toBe(version + 1);
    expect(catalog.snapshot.get("auto-deploy-docker")).toMatchObject({ status: "draft", origin: "gap" });
    expect(await store.clusters.drafts("main")).toMatchObject([
      { intentKey: "deploy-docker", status: "drafted", skillName: "auto-deploy-docker", clusterSize: 3 },
    ]);
    // A later crossing never drafts the same intent twice.
    expect(await fail({ session: 3, intentKey: "deploy-docker" })).toEqual([
      { action: "skipped", why: "already drafted (auto-deploy-docker)" },
    ]);
  });

  it("uses Chinese headings with BOT_LOCALE=zh and makes an ASCII skill name for a Chinese intent", async () => {
    const { fail, ownDir } = await gapLoopSetup({ engine, locale: "zh", trigger: 2 });
    await fail({ session: 1, intentKey: "部署-服务" });
    const [outcome] = await fail({ session: 2, intentKey: "部署-服务" });
    const name = draftSkillName("部署-服务");
    expect(name).toMatch(/^auto-[0-9a-f]{8}$/);
    expect(outcome).toMatchObject({ action: "drafted", skillName: name });
    const text = readFileSync(join(ownDir, name, "SKILL.md"), "utf8");
    for (const section of ["触发背景", "操作步骤", "工具建议", "测试建议"]) expect(text).toContain(`## ${section}`);
    expect(text).toContain("intent_key: 部署-服务");
  });

  it("respects the lookback window and the threshold exactly", async () => {
    const { fail, clock } = await gapLoopSetup({ engine, trigger: 3, lookbackHours: 10 });
    await fail({ session: 1, intentKey: "make-report" });
    await fail({ session: 2, intentKey: "make-report" });
    clock.time += 10 * HOUR + 1;
    expect(await fail({ session: 3, intentKey: "make-report" })).toEqual([{ action: "skipped", why: "1 of 3 events" }]);
    await fail({ session: 1, intentKey: "make-report" });
    expect(await fail({ session: 2, intentKey: "make-report" })).toMatchObject([{ action: "drafted" }]);
  });

  it("a single session repeating itself never drafts", async () => {
    const { fail, ownDir } = await gapLoopSetup({ engine, trigger: 2 });
    for (let index = 0; index < 6; index += 1)
      expect(await fail({ session: 1, intentKey: "one-off-thing" })).toEqual([
        expect.objectContaining({ why: expect.stringMatching(/one session|of 2 events/) }),
      ]);
    expect(existsSync(join(ownDir, "auto-one-off-thing"))).toBe(false);
  });

  it("negative outcomes are capability gaps whose cluster is evaluated at once, and drafted like the others", async () => {
    const { loop, store, ownDir, catalog } = await gapLoopSetup({ engine, trigger: 3 });
    const session = async (id: number) => (await store.sessions.activeSession("main", "test", `chat-${id}`)).id;
    const outcome = async (traceId: string, sessionId: number, kind: "corrected" | "negative_feedback") =>
      loop.recordNegativeOutcome({
        agentId: "main",
        traceId,
        sessionId,
        userId: "u1",
        userText: "convert the invoice to euros",
        intentKey: "convert-currency",
        kind,
        detail: kind === "corrected" ? "no, use today's rate" : "wrong rate",
      });
    await outcome("tr-a", await session(1), "corrected");
    await outcome("tr-b", await session(1), "negative_feedback");
    expect(existsSync(join(ownDir, "auto-convert-currency"))).toBe(false);
    expect(
      (await store.gaps.byTrace("tr-a")).map((gap) => [
        gap.reason,
        gap.gapClass,
        gap.intentKey,
        gap.detail,
        gap.userText,
      ]),
    ).toEqual([
      [
        "negative_outcome",
        "capability",
        "convert-currency",
        "corrected: no, use today's rate",
        "convert the invoice to euros",
      ],
    ]);
    await outcome("tr-c", await session(2), "corrected");
    expect(existsSync(join(ownDir, "auto-convert-currency", "SKILL.md"))).toBe(true);
    expect(catalog.snapshot.get("auto-convert-currency")).toMatchObject({ status: "draft", origin: "gap" });
    expect(await store.clusters.drafts("main")).toMatchObject([
      { intentKey: "convert-currency", status: "drafted", clusterSize: 3 },
    ]);
  });

  it("environment gaps are kept and shown but never drafted", async () => {
    const { fail, ownDir, store, clock } = await gapLoopSetup({ engine, trigger: 2 });
    for (const session of [1, 2, 3]) {
      expect(await fail({ session, intentKey: "fetch-report", reason: "tool_failure", errorCode: "TIMEOUT" })).toEqual(
        [],
      );
    }
    expect(existsSync(join(ownDir, "auto-fetch-report"))).toBe(false);
    const listing = await formatClusters(store.clusters, "main", clock.now() - 72 * HOUR, clock.now(), 72, "en");
    // Shown apart from capability gaps, by cause (gap-commands.ts).
    expect(listing).toBe(
      "No capability gaps in the last 72 h.\n\nEnvironment problems (last 72 h; never drafted into skills):\n- tool timed out · 3× · last 0 min ago",
    );
  });

  it("never overwrites an existing skill: the cluster is linked to it", async () => {
    const { fail, ownDir, writeSkill } = await gapLoopSetup({ engine, trigger: 2 });
    writeSkill(ownDir, "auto-write-poem", "Hand-written by an operator");
    const before = readFileSync(join(ownDir, "auto-write-poem", "SKILL.md"), "utf8");
    await fail({ session: 1, intentKey: "write-poem" });
    expect(await fail({ session: 2, intentKey: "write-poem" })).toEqual([
      { action: "linked", skillName: "auto-write-poem", why: "a skill of that name exists" },
    ]);
    expect(readFileSync(join(ownDir, "auto-write-poem", "SKILL.md"), "utf8")).toBe(before);
  });

  it("a strong overlap with an existing skill links the cluster instead of drafting a near-duplicate", async () => {
    const { fail, baseDir, ownDir, writeSkill, store, clock } = await gapLoopSetup({ engine, trigger: 2 });
    writeSkill(baseDir, "docker-deployment", "Deploy services with Docker Compose on the team server");
    await fail({ session: 1, intentKey: "deploy-docker-service" });
    expect(await fail({ session: 2, intentKey: "deploy-docker-service" })).toEqual([
      { action: "linked", skillName: "docker-deployment", why: "an existing skill overlaps strongly" },
    ]);
    expect(existsSync(join(ownDir, "auto-deploy-docker-service"))).toBe(false);
    expect(await formatClusters(store.clusters, "main", 0, clock.now(), 72, "en")).toContain(
      "linked to docker-deployment",
    );
  });

  it("uses the model's draft when it passes the gate, and the template when it does not", async () => {
    const good = (name: string, intent: string) =>
      `---\nname: ${name}\ndescription: Convert spreadsheets to CSV files. Use when a user sends xlsx data.\nstatus: draft\norigin: gap\nintent_key: ${intent}\ncreated: 2026-11-30\n---\n\n## Trigger background\nUsers send xlsx files often.\n## Procedure\n1. Read the file.\n2. Convert it.\n## Tool suggestions\nUse file_read and file_write.\n## Test suggestions\nOpen the CSV and compare rows.\n`;
    const model = scriptedModel((request) => {
      const system = request.messages[0]?.content ?? "";
      const name = /name: (\S+)/.exec(system)?.[1] ?? "";
      const intent = /intent_key: (\S+)/.exec(system)?.[1] ?? "";
      return intent === "convert-xlsx" ? `\`\`\`markdown\n${good(name, intent)}\`\`\`` : "Here is a skill: do things.";
    });
    const { fail, ownDir } = await gapLoopSetup({ engine, model, trigger: 2 });
    await fail({ session: 1, intentKey: "convert-xlsx" });
    expect(await fail({ session: 2, intentKey: "convert-xlsx" })).toMatchObject([
      { action: "drafted", author: "model" },
    ]);
    expect(readFileSync(join(ownDir, "auto-convert-xlsx", "SKILL.md"), "utf8")).toContain(
      "Users send xlsx files often.",
    );
    await fail({ session: 1, intentKey: "translate-memo" });
    expect(await fail({ session: 2, intentKey: "translate-memo" })).toMatchObject([
      { action: "drafted", author: "template" },
    ]);
    expect(model.requests.every((request) => request.purpose === "draft")).toBe(true);
  });

  it("the gate rejects drafts with wrong fields or missing sections", () => {
    const template = renderDraftTemplate(
      "auto-x-y",
      { intentKey: "x-y", reason: "no_skill", count: 3, sessions: 2, samples: ["a"], errors: [] },
      "en",
      "2026-11-30",
    );
    expect(gateDraft(template, { name: "auto-x-y", intentKey: "x-y", locale: "en" }).ok).toBe(true);
    expect(gateDraft(template, { name: "auto-x-y", intentKey: "x-y", locale: "zh" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/section "## 触发背景" is missing/),
    });
    expect(
      gateDraft(template.replace("status: draft", "status: active"), {
        name: "auto-x-y",
        intentKey: "x-y",
        locale: "en",
      }),
    ).toMatchObject({ ok: false, error: "status must be draft" });
    expect(
      gateDraft(template.replace(/## Procedure\n[^#]*/, "## Procedure\n\n"), {
        name: "auto-x-y",
        intentKey: "x-y",
        locale: "en",
      }),
    ).toMatchObject({ ok: false, error: 'section "## Procedure" is empty' });
    expect(gateDraft("no frontmatter", { name: "auto-x-y", intentKey: "x-y", locale: "en" }).ok).toBe(false);
  });

  it("concurrent crossings: two clusters give one draft each, one cluster never two", async () => {
    const { loop, ownDir, store } = await gapLoopSetup({ engine, trigger: 2 });
    for (const intentKey of ["alpha-task", "beta-task"]) {
      for (const session of [1, 2]) {
        await loop.recordGap({
          agentId: "main",
          sessionId: (await store.sessions.activeSession("main", "t", `c${session}`)).id,
          traceId: `${intentKey}-${session}`,
          intentKey,
          reason: "no_skill",
          userText: intentKey,
        });
      }
    }
    // Both clusters have crossed; each is evaluated twice, all at once.
    const outcomes = await Promise.all([
      loop.evaluate("main", "alpha-task", "no_skill"),
      loop.evaluate("main", "beta-task", "no_skill"),
      loop.evaluate("main", "alpha-task", "no_skill"),
      loop.evaluate("main", "beta-task", "no_skill"),
    ]);
    expect(
      outcomes
        .filter((outcome) => outcome.action === "drafted")
        .map((outcome) => (outcome as { skillName: string }).skillName)
        .sort(),
    ).toEqual(["auto-alpha-task", "auto-beta-task"]);
    expect((await store.clusters.drafts("main")).map((draft) => [draft.intentKey, draft.status])).toEqual([
      ["alpha-task", "drafted"],
      ["beta-task", "drafted"],
    ]);
    expect(existsSync(join(ownDir, "auto-alpha-task", "SKILL.md"))).toBe(true);
    expect(existsSync(join(ownDir, "auto-beta-task", "SKILL.md"))).toBe(true);
  });

  it("concurrent evaluations of a cluster that has crossed produce exactly one draft", async () => {
    const { loop, store } = await gapLoopSetup({ engine, trigger: 2 });
    for (const session of [1, 2]) {
      await loop.recordGap({
        agentId: "main",
        sessionId: (await store.sessions.activeSession("main", "t", `c${session}`)).id,
        traceId: `x${session}`,
        intentKey: "gamma-task",
        reason: "no_skill",
        userText: "gamma",
      });
    }
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => loop.evaluate("main", "gamma-task", "no_skill")),
    );
    expect(outcomes.filter((outcome) => outcome.action === "drafted")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.action === "skipped")).toHaveLength(4);
  });
});

describe.each(STORE_ENGINES)("intent keys (%s)", (engine) => {
  it("merges keys with the same words in another order or form into one cluster", async () => {
    const { fail, store } = await gapLoopSetup({ engine, trigger: 3 });
    await fail({ session: 1, intentKey: "deploy-docker" });
    await fail({ session: 2, intentKey: "docker-deploy" });
    const [outcome] = await fail({ session: 3, intentKey: "deploying-docker" });
    expect(outcome).toMatchObject({ action: "drafted", skillName: "auto-deploy-docker" });
    const rows = await store.sql.all(
      "SELECT intent_key AS key, raw_intent_key AS raw FROM capability_gaps ORDER BY id",
    );
    expect(rows).toEqual([
      { key: "deploy-docker", raw: "deploy-docker" },
      { key: "deploy-docker", raw: "docker-deploy" },
      { key: "deploy-docker", raw: "deploying-docker" },
    ]);
  });

  it("keeps different intents apart", async () => {
    const { fail, store } = await gapLoopSetup({ engine });
    await fail({ session: 1, intentKey: "deploy-docker" });
    await fail({ session: 1, intentKey: "remove-docker-image" });
    await fail({ session: 1, intentKey: "summarize-meeting" });
    expect(
      (await store.sql.all<{ key: string }>("SELECT DISTINCT intent_key AS key FROM capability_gaps ORDER BY key")).map(
        (row) => row.key,
      ),
    ).toEqual(["deploy-docker", "remove-docker-image", "summarize-meeting"]);
  });
});

describe("catalog reload safety", () => {
  it("a broken SKILL.md keeps the previous version of that skill and is reported", async () => {
    const { catalog, baseDir, writeSkill } = await gapLoopSetup();
    writeSkill(baseDir, "stable-skill", "Works well");
    writeFileSync(join(baseDir, "stable-skill", "SKILL.md"), "---\nname: stable-skill\n---\nbroken: no description");
    const changes = catalog.reload();
    expect(catalog.snapshot.get("stable-skill")?.description).toBe("Works well");
    expect(changes.invalid).toEqual([
      {
        path: join(baseDir, "stable-skill", "SKILL.md"),
        reason: expect.stringMatching(/the previous version stays in use/),
      },
    ]);
  });

  it("a reload that fails as a whole keeps the previous snapshot and says why", async () => {
    const { catalog, baseDir, writeSkill } = await gapLoopSetup();
    writeSkill(baseDir, "one", "first");
    const version = catalog.snapshot.version;
    rmSync(baseDir, { recursive: true });
    writeFileSync(baseDir, "not a folder");
    const changes = catalog.reload();
    expect(changes.error).toMatch(/ENOTDIR/);
    expect(catalog.snapshot.version).toBe(version);
    expect(catalog.snapshot.get("one")).toBeDefined();
    rmSync(baseDir);
    mkdirSync(baseDir);
  });
});
