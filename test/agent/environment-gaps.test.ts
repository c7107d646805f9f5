/**
 * Environment gaps are keyed by their cause, never by the user's words: one cluster per
 * cause and agent, shown apart from capability gaps, told to operators at most once per
 * hour. The cause rules decide in code when a gap is recorded and in SQL when rows are
 * read, so both must agree, and rows recorded before causes existed group by cause too.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { formatClusters } from "../../src/agent/commands/gap-commands.js";
import { classifyGap, gapCauseWords } from "../../src/agent/gaps/classify-gap.js";
import { createEnvironmentNotice } from "../../src/agent/gaps/environment-notice.js";
import { createGapRecorder } from "../../src/agent/gaps/gap-recorder.js";
import { canonicalIntentKey } from "../../src/agent/gaps/intent-merge.js";
import { agentGapReport } from "../../src/agent/gaps/gap-report.js";
import { ENVIRONMENT_CAUSES, environmentCause } from "../../src/store/gap-causes.js";
import type { Store } from "../../src/store/store.js";
import { gapLoopSetup } from "../helpers/gap-loop.js";
import { openTestStore, STORE_ENGINES } from "../helpers/test-store.js";

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** Every rule, and the failures next to it that are not environment problems. */
const CASES = [
  ["model_failure", "server", "the model server failed (500): boom", "model-unavailable"],
  ["model_failure", "connection", "cannot reach the model server (ECONNREFUSED)", "model-unavailable"],
  ["model_failure", "connection", "cannot reach the model server (getaddrinfo ENOTFOUND x)", "model-unavailable"],
  ["model_failure", "rate_limit", "the model server is rate limiting: slow down", "model-rate-limited"],
  ["model_failure", "timeout", "the model server did not answer in time", "model-timeout"],
  ["model_failure", "auth", "the model server refused the API key (401)", "model-auth-failed"],
  ["model_failure", "bad_request", "context too long", "model-bad-request"],
  ["model_failure", "bad_response", "no choices[0].message", "model-bad-response"],
  ["model_failure", "some_new_kind", null, "model-unavailable"],
  ["tool_failure", "TOOLHOST_UNAVAILABLE", "cannot start the toolhost: spawn failed", "toolhost-unavailable"],
  ["tool_failure", "TOOLHOST_CRASHED", "the toolhost connection closed during tools/call", "toolhost-unavailable"],
  ["tool_failure", "INTERNAL", "unexpected", "toolhost-unavailable"],
  ["tool_failure", "TOOLHOST_UNAVAILABLE", "the toolhost did not start: bwrap: No permissions", "sandbox-unavailable"],
  ["tool_failure", "TOOLHOST_CRASHED", "the per-command Sandbox cannot start", "sandbox-unavailable"],
  ["tool_failure", "TIMEOUT", "the command ran longer than 30000 ms and was killed", "tool-timeout"],
  ["tool_failure", "MCP_UNAVAILABLE", "server github is backing off", "mcp-unavailable"],
  ["tool_failure", "EXIT_NONZERO", "the command exited with code 127", "command-missing"],
  ["tool_failure", "EXIT_NONZERO", "bash: jq: command not found", "command-missing"],
  ["tool_failure", "EXIT_NONZERO", "the command exited with code 1", undefined],
  ["tool_failure", "PATH_NOT_FOUND", "no such file", undefined],
  ["tool_failure", "NETWORK_REFUSED", "example.com is not on the allow list", undefined],
  ["no_skill", null, null, undefined],
  ["parse_failure", null, "routing reply: not json", undefined],
  ["step_budget", null, null, undefined],
  ["reported", null, "cannot do that", undefined],
  ["negative_outcome", null, "that was wrong", undefined],
] as const;

describe("environment causes", () => {
  it.each(CASES)("%s %s %j is %s", (reason, errorCode, detail, cause) => {
    expect(environmentCause({ reason, errorCode, detail })).toBe(cause);
    expect(classifyGap(reason, { ...(errorCode ? { errorCode } : {}), ...(detail ? { detail } : {}) })).toBe(
      cause ? "environment" : "capability",
    );
  });

  it("every cause has words in both locales, never the code itself", () => {
    for (const locale of ["en", "zh"] as const) {
      const words = ENVIRONMENT_CAUSES.map((cause) => gapCauseWords(locale, cause));
      expect(new Set(words).size, locale).toBe(ENVIRONMENT_CAUSES.length);
      for (const [index, cause] of ENVIRONMENT_CAUSES.entries()) expect(words[index]).not.toBe(cause);
    }
    expect(gapCauseWords("en", "model-rate-limited")).toBe("model rate limited");
    expect(gapCauseWords("zh", "model-rate-limited")).toBe("模型服务限流");
    expect(gapCauseWords("en", "a-cause-of-tomorrow")).toBe("a-cause-of-tomorrow");
  });
});

/** A pino logger whose lines the test reads. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const warnings = () => lines.filter((line) => line.level === 40).map((line) => line.msg);
  return { logger: pino({ level: "info" }, stream), lines, warnings };
}

describe.each(STORE_ENGINES)("environment gaps in the store (%s)", (engine) => {
  async function setup() {
    const clock = { time: Date.UTC(2026, 10, 30, 12), now: () => clock.time };
    const store: Store = await openTestStore(engine, { clock });
    const log = capturingLogger();
    let merged = 0;
    const record = createGapRecorder({
      gaps: store.gaps,
      logger: log.logger,
      clock,
      canonicalKey: (agentId, key) => {
        merged += 1;
        return canonicalIntentKey(store.clusters, agentId, key, 0);
      },
    });
    return { store, clock, log, record, merges: () => merged };
  }

  it("code and SQL name the same cause for every case", async () => {
    const { store } = await setup();
    try {
      for (const [index, [reason, errorCode, detail]] of CASES.entries())
        await store.gaps.record({
          agentId: `a${index}`,
          traceId: `t${index}`,
          intentKey: "whatever-the-user-said",
          reason,
          gapClass: classifyGap(reason, { ...(errorCode ? { errorCode } : {}), ...(detail ? { detail } : {}) }),
          ...(errorCode ? { errorCode } : {}),
          ...(detail ? { detail } : {}),
        });
      for (const [index, [, , , cause]] of CASES.entries()) {
        const environment = await store.clusters.environment(`a${index}`, 0);
        expect(
          environment.map((row) => row.cause),
          `case ${index}`,
        ).toEqual(cause ? [cause] : []);
        expect(await store.clusters.top(`a${index}`, 0, 10), `case ${index}`).toHaveLength(cause ? 0 : 1);
        if (cause) expect(await store.gaps.countCauseSince(`a${index}`, cause, 0)).toBe(1);
      }
    } finally {
      await store.close();
    }
  });

  it("outages with different words are one cluster per cause; the words stay out of the key and the merge", async () => {
    const { store, clock, record, merges } = await setup();
    try {
      const outage = (userText: string, errorCode: string, detail: string) =>
        record({
          agentId: "main",
          traceId: `tr-${userText}`,
          intentKey: userText.replace(/\s+/g, "-"),
          reason: "model_failure",
          errorCode,
          detail,
          userText,
        });
      await outage("hello", "server", "the model server failed (500): fake error 500");
      clock.time += MINUTE;
      await outage("deploy the app", "connection", "cannot reach the model server (ECONNREFUSED)");
      clock.time += MINUTE;
      await outage("你好", "server", "the model server failed (502): bad gateway");
      await outage("hello-429", "rate_limit", "the model server is rate limiting: slow down");
      expect(merges()).toBe(0);
      await record({ agentId: "main", traceId: "tr-cap", intentKey: "deploy-docker", reason: "no_skill" });
      expect(merges()).toBe(1);
      expect(
        await store.sql.all(
          "SELECT intent_key AS intentKey, raw_intent_key AS rawIntentKey, class AS gapClass FROM capability_gaps ORDER BY id",
        ),
      ).toEqual([
        { intentKey: "model-unavailable", rawIntentKey: "hello", gapClass: "environment" },
        { intentKey: "model-unavailable", rawIntentKey: "deploy-the-app", gapClass: "environment" },
        { intentKey: "model-unavailable", rawIntentKey: "你好", gapClass: "environment" },
        { intentKey: "model-rate-limited", rawIntentKey: "hello-429", gapClass: "environment" },
        { intentKey: "deploy-docker", rawIntentKey: "deploy-docker", gapClass: "capability" },
      ]);
      const start = Date.UTC(2026, 10, 30, 12);
      const report = await agentGapReport(store.clusters, "main", 0);
      expect(report.clusters.map((cluster) => cluster.intentKey)).toEqual(["deploy-docker"]);
      expect(report.environment).toEqual([
        {
          cause: "model-rate-limited",
          count: 1,
          firstSeenAt: start + 2 * MINUTE,
          lastSeenAt: start + 2 * MINUTE,
          lastDetail: "the model server is rate limiting: slow down",
        },
        {
          cause: "model-unavailable",
          count: 3,
          firstSeenAt: start,
          lastSeenAt: start + 2 * MINUTE,
          lastDetail: "the model server failed (502): bad gateway",
        },
      ]);
      expect(JSON.stringify(report.environment)).not.toMatch(/hello|deploy|你好/);
      // The environment keys never enter the registry the capability merge reads.
      expect(await store.clusters.recentKeys("main", 0)).toEqual([
        { intentKey: "deploy-docker", signature: "deploy docker" },
      ]);
    } finally {
      await store.close();
    }
  });

  it("rows recorded keyed by the user's words (before causes) group by cause at read time", async () => {
    const { store, clock } = await setup();
    try {
      const old = (intentKey: string, errorCode: string, userText: string) =>
        store.gaps.record({
          agentId: "main",
          traceId: `old-${intentKey}`,
          intentKey,
          reason: "model_failure",
          gapClass: "environment",
          errorCode,
          detail: `failed: ${errorCode}`,
          userText,
        });
      await old("hi", "server", "hi");
      await old("hello-429", "rate_limit", "hello 429");
      clock.time += MINUTE;
      await old("hello-there", "connection", "hello there");
      clock.time += MINUTE;
      await store.gaps.record({
        agentId: "main",
        traceId: "old-tool",
        intentKey: "fetch-report",
        reason: "tool_failure",
        gapClass: "environment",
        errorCode: "TIMEOUT",
        userText: "fetch the report",
      });
      const report = await agentGapReport(store.clusters, "main", 0);
      expect(report.clusters).toEqual([]);
      expect(report.environment.map(({ cause, count }) => ({ cause, count }))).toEqual([
        { cause: "tool-timeout", count: 1 },
        { cause: "model-unavailable", count: 2 },
        { cause: "model-rate-limited", count: 1 },
      ]);
      expect(report.environment[0]?.lastDetail).toBeNull();
      expect(report.environment[1]?.lastDetail).toBe("failed: connection");
    } finally {
      await store.close();
    }
  });

  it("/capability_gaps and the CLI list show environment problems apart, in words, without the user's words", async () => {
    const { store, clock, record } = await setup();
    try {
      const gap = (traceId: string, fields: Partial<Parameters<typeof record>[0]>) =>
        record({ agentId: "main", traceId, intentKey: "x", reason: "model_failure", ...fields });
      await gap("1", { errorCode: "server", detail: "the model server failed (500)", userText: "secret plan" });
      await gap("2", { errorCode: "server", detail: "the model server failed (503)", userText: "other words" });
      clock.time += 5 * MINUTE;
      await gap("3", { reason: "tool_failure", errorCode: "TIMEOUT", detail: "ran too long", userText: "run it" });
      const now = clock.now();
      const since = now - 72 * HOUR;
      expect(await formatClusters(store.clusters, "main", since, now, 72, "en")).toBe(
        [
          "No capability gaps in the last 72 h.",
          "",
          "Environment problems (last 72 h; never drafted into skills):",
          "- tool timed out · 1× · last 0 min ago",
          "- model unavailable (server error or unreachable) · 2× · last 5 min ago",
        ].join("\n"),
      );
      expect(await formatClusters(store.clusters, "main", since, now, 72, "zh")).toBe(
        [
          "最近 72 小时没有能力缺口。",
          "",
          "环境问题（最近 72 小时，不会起草成技能）：",
          "- 工具调用超时 · 1 次 · 最近 0 分钟前",
          "- 模型服务不可用（服务器出错或无法连接） · 2 次 · 最近 5 分钟前",
        ].join("\n"),
      );
      await gap("4", { reason: "no_skill", intentKey: "deploy-docker", userText: "deploy with docker" });
      const detailed = await formatClusters(store.clusters, "main", since, now, 72, "en", { detailed: true });
      expect(detailed).toMatch(
        /^Capability gaps \(last 72 h, top 1\):\n1\. deploy-docker · no skill · capability · 1×/,
      );
      expect(detailed).toContain(
        "- model unavailable (server error or unreachable) · 2× · last 5 min ago\n   first seen 5 min ago · last error: the model server failed (503)",
      );
      expect(detailed).toContain(
        "- tool timed out · 1× · last 0 min ago\n   first seen 0 min ago · last error: ran too long",
      );
      expect(detailed).not.toMatch(/secret plan|other words|run it/);
    } finally {
      await store.close();
    }
  });

  it("operators are told once per hour per agent and cause, with the last hour's count", async () => {
    const { store, clock, record, log } = await setup();
    try {
      const outage = (agentId: string, errorCode = "rate_limit") =>
        record({ agentId, traceId: `t-${clock.time}`, intentKey: "x", reason: "model_failure", errorCode });
      await outage("main");
      clock.time += 10 * MINUTE;
      await outage("main");
      await outage("main");
      clock.time += 49 * MINUTE;
      await outage("main");
      expect(log.warnings()).toEqual([
        "environment problem: model rate limited — 1 in the last hour; see laoding gaps --agent main",
      ]);
      // Another cause, another agent: each has its own hour.
      await outage("main", "server");
      await outage("other");
      clock.time += 2 * MINUTE;
      await outage("main");
      await outage("main");
      expect(log.warnings()).toEqual([
        "environment problem: model rate limited — 1 in the last hour; see laoding gaps --agent main",
        "environment problem: model unavailable (server error or unreachable) — 1 in the last hour; see laoding gaps --agent main",
        "environment problem: model rate limited — 1 in the last hour; see laoding gaps --agent other",
        // 61 minutes after the first: the last hour holds the 3 at +10 and +59 and this one.
        "environment problem: model rate limited — 4 in the last hour; see laoding gaps --agent main",
      ]);
      expect(log.lines.find((line) => line.level === 40)).toMatchObject({
        agentId: "main",
        cause: "model-rate-limited",
      });
      // Capability gaps are not environment problems: no notice.
      await record({ agentId: "main", traceId: "cap", intentKey: "deploy", reason: "no_skill" });
      expect(log.warnings()).toHaveLength(4);
    } finally {
      await store.close();
    }
  });
});

describe("the operators' notice", () => {
  it("two gaps at once give one notice, and a failed count never breaks recording", async () => {
    const { logger, warnings } = capturingLogger();
    const clock = { now: () => 1_000 };
    let release: (count: number) => void = () => undefined;
    const notice = createEnvironmentNotice({
      logger,
      clock,
      countSince: () => new Promise<number>((resolve) => (release = resolve)),
    });
    const first = notice("main", "tool-timeout");
    const second = notice("main", "tool-timeout");
    await second;
    release(2);
    await first;
    expect(warnings()).toEqual([
      "environment problem: tool timed out — 2 in the last hour; see laoding gaps --agent main",
    ]);
    const failing = createEnvironmentNotice({ logger, clock, countSince: () => Promise.reject(new Error("db down")) });
    await expect(failing("main", "model-timeout")).resolves.toBeUndefined();
    expect(warnings()[1]).toBe("could not count the environment gaps for the operators' notice");
  });

  it("the gap loop never drafts an environment cluster, whatever its size", async () => {
    const { fail, ownDir } = await gapLoopSetup({ trigger: 2 });
    for (const session of [1, 2, 3])
      expect(
        await fail({ session, intentKey: `words-${session}`, reason: "model_failure", errorCode: "server" }),
      ).toEqual([]);
    const { readdirSync } = await import("node:fs");
    expect(readdirSync(ownDir)).toEqual([]);
  });
});
