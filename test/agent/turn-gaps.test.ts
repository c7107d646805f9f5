/**
 * Gaps only from real failures, through the real bot (store, toolhost, fake model,
 * distillation loop and gap loop): the model's report_gap, its bad arguments, and a task
 * the user corrects. Tool failures recovered or not: orchestrator.test.ts.
 */
import { describe, expect, it } from "vitest";
import { toolNameMap } from "../../src/agent/react/tool-names.js";
import { REPORT_GAP_TOOL } from "../../src/agent/react/report-gap.js";
import { isRoutingRequest, routeTo } from "../fakes/openai-server.js";
import { startTestBot } from "../helpers/bot.js";

const GAP_COLUMNS =
  "SELECT reason, class, intent_key AS intentKey, tool, detail, user_text AS userText FROM capability_gaps ORDER BY id";

describe("report_gap", () => {
  it("a valid call records one 'reported' gap per turn and tells the model to be honest; it is no toolhost call", async () => {
    const bot = await startTestBot();
    const report = { asked: "book a flight to Paris", missing: "a booking tool or an airline account" };
    bot.fake.enqueue(
      routeTo([], "book-flight"),
      {
        toolCalls: [
          { name: REPORT_GAP_TOOL, arguments: report },
          { name: REPORT_GAP_TOOL, arguments: { asked: "again", missing: "again" } },
        ],
      },
      { text: "I can't book flights: I have no booking tool." },
    );
    expect(await bot.send("please book me a flight to Paris")).toBe("I can't book flights: I have no booking tool.");
    const react = bot.fake.requests[1];
    const offered = react?.tools?.find((tool) => tool.function.name === REPORT_GAP_TOOL)?.function;
    expect(offered?.description).toMatch(/^Call this only when you cannot do what the user asked/);
    expect(offered?.parameters).toMatchObject({
      properties: { asked: { type: "string", maxLength: 300 }, missing: { type: "string", maxLength: 300 } },
      required: ["asked", "missing"],
    });
    const results = bot.fake.requests[2]?.messages.filter((message) => message.role === "tool") ?? [];
    expect(results.map((message) => message.content)).toEqual([
      expect.stringMatching(/^Recorded: .*tell the user honestly what you cannot do/),
      expect.stringMatching(/^Already recorded for this turn/),
    ]);
    const { store } = bot.runtime;
    expect(await store.sql.all(GAP_COLUMNS)).toEqual([
      {
        reason: "reported",
        class: "capability",
        intentKey: "book-flight",
        tool: null,
        detail: "missing: a booking tool or an airline account; asked: book a flight to Paris (no skill matched)",
        userText: "please book me a flight to Paris",
      },
    ]);
    const traceId = (await store.sql.get<{ traceId: string }>("SELECT trace_id AS traceId FROM capability_gaps"))
      ?.traceId as string;
    expect(await store.toolCalls.byTrace(traceId)).toEqual([]);
  });

  it("bad arguments: the model is told which field is wrong, and nothing is recorded", async () => {
    const bot = await startTestBot();
    bot.fake.enqueue(
      routeTo([], "book-flight"),
      {
        toolCalls: [
          { name: REPORT_GAP_TOOL, arguments: { asked: "book a flight" } },
          { name: REPORT_GAP_TOOL, arguments: { asked: "book a flight", missing: "x".repeat(301) } },
          { name: REPORT_GAP_TOOL, arguments: { asked: "   ", missing: 7 } },
          { name: REPORT_GAP_TOOL, arguments: "{asked: oops" },
        ],
      },
      { text: "Sorry." },
    );
    await bot.send("book a flight");
    const results = bot.fake.requests[2]?.messages.filter((message) => message.role === "tool") ?? [];
    expect(results.map((message) => message.content)).toEqual([
      "ERROR_CODE=INVALID_ARGS; TOOL=report_gap; REASON=missing: required, a string",
      "ERROR_CODE=INVALID_ARGS; TOOL=report_gap; REASON=missing: at most 300 characters",
      "ERROR_CODE=INVALID_ARGS; TOOL=report_gap; REASON=asked: must not be empty; missing: required, a string",
      expect.stringMatching(
        /^ERROR_CODE=INVALID_ARGS; TOOL=report_gap; REASON=arguments are not valid JSON.*; send \{"asked": "\.\.\.", "missing": "\.\.\."\}$/,
      ),
    ]);
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 0 });
  });

  it("no toolhost tool takes report_gap's name", () => {
    expect([...toolNameMap(["report.gap", "file.read"], [REPORT_GAP_TOOL])]).toEqual([
      ["report_gap_2", "report.gap"],
      ["file_read", "file.read"],
    ]);
  });
});

describe("negative outcomes", () => {
  it("the user's next message corrects the answer: a negative_outcome gap for the corrected task", async () => {
    const bot = await startTestBot();
    // The corrected task is distilled in the background too: every request gets an answer.
    bot.fake.respond((request) =>
      isRoutingRequest(request) ? routeTo([], "count-words") : { text: "The file has 12 words." },
    );
    await bot.send("how many words are in notes.md?");
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 0 });
    await bot.send("no, that's wrong: it has 40 words");
    expect(await bot.runtime.store.sql.all(GAP_COLUMNS)).toEqual([
      {
        reason: "negative_outcome",
        class: "capability",
        intentKey: "count-words",
        tool: null,
        detail: "corrected: no, that's wrong: it has 40 words",
        userText: "how many words are in notes.md?",
      },
    ]);
  });

  it("with the distillation loop off, a correction is still a negative_outcome gap; thanks is not", async () => {
    const bot = await startTestBot({ env: { DISTILLATION_ENABLED: "false" } });
    bot.fake.respond((request) =>
      isRoutingRequest(request) ? routeTo([], "count-words") : { text: "The file has 12 words." },
    );
    await bot.send("how many words are in notes.md?");
    await bot.send("no thanks, that's all");
    await bot.send("how many words are in notes.md?");
    await bot.send("no, that's wrong: it has 40 words");
    expect(await bot.runtime.store.sql.all(GAP_COLUMNS)).toEqual([
      {
        reason: "negative_outcome",
        class: "capability",
        intentKey: "count-words",
        tool: null,
        detail: "corrected: no, that's wrong: it has 40 words",
        userText: "how many words are in notes.md?",
      },
    ]);
  });

  it("negative /feedback on the last answer is a negative_outcome gap too", async () => {
    const bot = await startTestBot();
    bot.fake.respond((request) =>
      isRoutingRequest(request) ? routeTo([], "summarize-report") : { text: "The report says sales rose." },
    );
    await bot.send("summarize the report");
    await bot.send("/feedback bad it says sales fell");
    expect(await bot.runtime.store.sql.all(GAP_COLUMNS)).toEqual([
      {
        reason: "negative_outcome",
        class: "capability",
        intentKey: "summarize-report",
        tool: null,
        detail: "negative_feedback: it says sales fell",
        userText: "summarize the report",
      },
    ]);
  });
});
