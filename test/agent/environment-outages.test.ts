/**
 * Three model outages of different words make one environment cluster: the real bot, its
 * real orchestrator and store, and the fake model server failing with 500, 503, a dead
 * endpoint, a 429 and a hang. Operators see the causes apart from capability gaps in chat
 * and in `laoding gaps` (text and --json), and never the user's words there.
 */
import { describe, expect, it } from "vitest";
import { startTestBot } from "../helpers/bot.js";
import { runLaoding } from "../helpers/cli.js";

const WORDS = /hello|deploy the app|你好|weather|take your time/;

describe("model outages become one environment cluster per cause", () => {
  it("500, 503 and a dead endpoint with different words are one model-unavailable cluster; 429 and a hang are their own", async () => {
    const bot = await startTestBot({ env: { LLM_TIMEOUT_MS: "1000" } });
    bot.fake.enqueue({ status: 500 });
    expect(await bot.send("hello", { chatId: "A" })).toMatch(/model service is unavailable/);
    bot.fake.enqueue({ status: 429, body: { error: { message: "slow down" } } });
    expect(await bot.send("what's the weather", { chatId: "A" })).toMatch(/rate/);
    bot.fake.enqueue({ text: "late", delayMs: 3_000 });
    expect(await bot.send("take your time", { chatId: "B" })).toMatch(/timeout/);
    bot.fake.enqueue({ status: 503 });
    await bot.send("deploy the app", { chatId: "B" });
    // The endpoint dies: the next call finds nobody listening.
    await bot.fake.close();
    expect(await bot.send("你好", { chatId: "C" })).toMatch(/cannot reach|reach/);

    expect(
      await bot.runtime.store.sql.all(
        "SELECT intent_key AS intentKey, raw_intent_key AS raw, class, error_code AS code FROM capability_gaps ORDER BY id",
      ),
    ).toEqual([
      { intentKey: "model-unavailable", raw: "hello", class: "environment", code: "server" },
      { intentKey: "model-rate-limited", raw: expect.any(String), class: "environment", code: "rate_limit" },
      { intentKey: "model-timeout", raw: expect.any(String), class: "environment", code: "timeout" },
      { intentKey: "model-unavailable", raw: expect.any(String), class: "environment", code: "server" },
      { intentKey: "model-unavailable", raw: expect.any(String), class: "environment", code: "connection" },
    ]);

    expect(await bot.send("/capability_gaps")).toBe(
      [
        "No capability gaps in the last 72 h.",
        "",
        "Environment problems (last 72 h; never drafted into skills):",
        "- model unavailable (server error or unreachable) · 3× · last 0 min ago",
        "- model timed out · 1× · last 0 min ago",
        "- model rate limited · 1× · last 0 min ago",
      ].join("\n"),
    );

    const json = await runLaoding(["gaps", "--json", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot });
    expect(json.code).toBe(0);
    const [report] = JSON.parse(json.stdout);
    expect(report.clusters).toEqual([]);
    expect(report.drafts).toEqual([]);
    expect(report.environment).toEqual([
      {
        cause: "model-unavailable",
        count: 3,
        firstSeenAt: expect.any(Number),
        lastSeenAt: expect.any(Number),
        lastDetail: expect.stringMatching(/^cannot reach the model server/),
      },
      {
        cause: "model-timeout",
        count: 1,
        firstSeenAt: expect.any(Number),
        lastSeenAt: expect.any(Number),
        lastDetail: "the model server did not answer in time",
      },
      {
        cause: "model-rate-limited",
        count: 1,
        firstSeenAt: expect.any(Number),
        lastSeenAt: expect.any(Number),
        lastDetail: expect.stringMatching(/rate limiting/),
      },
    ]);
    expect(report.environment[0].firstSeenAt).toBeLessThan(report.environment[0].lastSeenAt);
    expect(JSON.stringify(report.environment)).not.toMatch(WORDS);

    const text = await runLaoding(["gaps", "--workspace", bot.workspaceDir], { repoRoot: bot.repoRoot });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^agent main\n {2}No capability gaps in the last 72 h\.\n\n {2}Environment problems \(last 72 h; never drafted into skills\):\n {2}- model unavailable \(server error or unreachable\) · 3× · last 0 min ago\n {5}first seen 0 min ago · last error: cannot reach the model server/,
    );
    expect(text.stdout).not.toMatch(WORDS);
  });
});
