/**
 * End to end through the real toolhost, the real store and the loopback fake model.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRoutingRequest, routeTo } from "../fakes/openai-server.js";
import { skillText, startTestBot } from "../helpers/bot.js";

const NOTES_SKILL = skillText(
  "write-notes",
  "Write meeting notes into a markdown file in the working folder",
  "# Write notes\n\n1. Write the notes with file_write.\n2. Confirm the path.",
);

describe("a turn end to end", () => {
  it("routes, runs a tool in the toolhost, answers, and stores everything", async () => {
    const bot = await startTestBot({ skills: { "write-notes": NOTES_SKILL } });
    bot.fake.enqueue(
      routeTo(["write-notes"], "write-meeting-notes"),
      { toolCalls: [{ name: "file_write", arguments: { path: "notes.md", content: "# Standup\n- shipped" } }] },
      { text: "Saved the notes to notes.md." },
    );
    const answer = await bot.send("please write the standup notes: shipped");
    expect(answer).toBe("Saved the notes to notes.md.");

    const chatFolder = join(bot.layout.workRoot, "main", "test-chat-1");
    expect(readFileSync(join(chatFolder, "notes.md"), "utf8")).toBe("# Standup\n- shipped");
    expect(readlinkSync(join(chatFolder, "团队经验"))).toBe(bot.layout.agentTrees("main").experienceDir);

    const [routing, first, second] = bot.fake.requests;
    expect(isRoutingRequest(routing as never)).toBe(true);
    expect(routing?.messages[0]?.content).toContain("- write-notes [active]: Write meeting notes");
    expect(routing?.messages[0]?.content).toContain("- skill-builder [active]");
    expect(routing?.authorization).toBe("Bearer sk-test-key");
    const system = first?.messages[0]?.content ?? "";
    expect(system).toContain("You are Laoding");
    expect(system).toContain("### write-notes\n# Write notes");
    expect(system).toContain(`Your working folder is ${chatFolder}`);
    expect(first?.tools?.map((tool) => tool.function.name)).toEqual([
      "file_read",
      "file_list",
      "file_write",
      "file_edit",
      "file_grep",
      "file_glob",
      "shell_exec",
      "library_search",
      "library_index",
      "report_gap",
    ]);
    expect(first?.tools?.[0]?.function.parameters).toMatchObject({ type: "object", required: ["path"] });
    expect(first?.tools?.at(-1)?.function.parameters).toMatchObject({ required: ["asked", "missing"] });
    expect(first?.messages.at(-1)).toEqual({ role: "user", content: "please write the standup notes: shipped" });
    expect(second?.messages.at(-1)).toMatchObject({ role: "tool", content: "created notes.md (19 bytes)" });

    const { store } = bot.runtime;
    const rows = await store.sql.all<{
      role: string;
      kind: string;
      content: string;
      traceId: string;
      toolCalls: string | null;
    }>("SELECT role, kind, content, trace_id AS traceId, tool_calls AS toolCalls FROM messages ORDER BY id");
    expect(rows.map((row) => `${row.role}/${row.kind}`)).toEqual([
      "user/chat",
      "assistant/scratch",
      "tool/scratch",
      "assistant/chat",
    ]);
    expect(new Set(rows.map((row) => row.traceId)).size).toBe(1);
    expect(JSON.parse(rows[1]?.toolCalls ?? "[]")).toMatchObject([{ name: "file_write" }]);
    const traceId = rows[0]?.traceId as string;
    expect(await store.toolCalls.byTrace(traceId)).toMatchObject([{ tool: "file.write", ok: 1, agentId: "main" }]);
    expect((await store.modelCalls.byTrace(traceId)).map((call) => call.purpose)).toEqual(["route", "react", "react"]);
    expect((await store.modelCalls.byTrace(traceId))[0]).toMatchObject({
      ok: 1,
      model: "fake-model",
      promptTokens: expect.any(Number),
      totalTokens: expect.any(Number),
    });
    expect(await store.gaps.byTrace(traceId)).toEqual([]);
  });

  it("answers invalid tool JSON and unknown tools to the model; the failures nothing recovered make one gap", async () => {
    const bot = await startTestBot({ skills: { "write-notes": NOTES_SKILL } });
    bot.fake.enqueue(
      routeTo(["write-notes"], "write-notes"),
      {
        toolCalls: [
          { name: "file_write", arguments: "{path: notes.md" },
          { name: "file_delete_everything", arguments: {} },
        ],
      },
      { text: "Sorry, done differently." },
    );
    await bot.send("write notes");
    const toolMessages = bot.fake.requests[2]?.messages.filter((message) => message.role === "tool") ?? [];
    expect(toolMessages[0]?.content).toMatch(
      /^ERROR_CODE=INVALID_ARGS; TOOL=file\.write; REASON=arguments are not valid JSON/,
    );
    expect(toolMessages[1]?.content).toMatch(
      /^ERROR_CODE=UNKNOWN_TOOL; TOOL=file_delete_everything; REASON=no tool named/,
    );
    // One turn, one gap: the last unrecovered failure, the others named in its detail.
    const gaps = await bot.runtime.store.sql.all<Record<string, string>>(
      "SELECT reason, class, tool, error_code AS code, intent_key AS intentKey, detail FROM capability_gaps ORDER BY id",
    );
    expect(gaps).toEqual([
      {
        reason: "parse_failure",
        class: "capability",
        tool: "file_delete_everything",
        code: "UNKNOWN_TOOL",
        intentKey: "write-notes",
        detail: expect.stringMatching(
          /^no tool named file_delete_everything; .*\(also failed: file\.write INVALID_ARGS\)$/,
        ),
      },
    ]);
  });

  it("a failing tool goes to the model as one line; unrecovered it is a tool_failure gap, recovered it is none", async () => {
    const bot = await startTestBot({ skills: { "write-notes": NOTES_SKILL } });
    bot.fake.enqueue(
      routeTo(["write-notes"], "read-notes"),
      { toolCalls: [{ name: "file_read", arguments: { path: "missing.md" } }] },
      { text: "There are no notes yet." },
    );
    expect(await bot.send("read my notes")).toBe("There are no notes yet.");
    expect(bot.fake.requests[2]?.messages.at(-1)?.content).toBe(
      "ERROR_CODE=PATH_NOT_FOUND; TOOL=file.read; REASON=missing.md does not exist",
    );
    expect(await bot.runtime.store.sql.all("SELECT reason, class, error_code AS code FROM capability_gaps")).toEqual([
      { reason: "tool_failure", class: "capability", code: "PATH_NOT_FOUND" },
    ]);

    // Recovered: the read fails, the model writes the file instead, and that succeeds. No gap.
    bot.fake.enqueue(
      routeTo(["write-notes"], "read-notes"),
      { toolCalls: [{ name: "file_read", arguments: { path: "missing.md" } }] },
      { toolCalls: [{ name: "file_write", arguments: { path: "missing.md", content: "# Notes" } }] },
      { text: "There were no notes; I started missing.md." },
    );
    await bot.send("read my notes, or start them");
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 1 });
  });

  it("runs out of steps: an honest partial answer and a step_budget gap", async () => {
    const bot = await startTestBot({ env: { REACT_MAX_STEPS: "2" }, skills: { "write-notes": NOTES_SKILL } });
    bot.fake.enqueue(
      routeTo(["write-notes"], "list-files"),
      { toolCalls: [{ name: "file_list", arguments: { path: "." } }] },
      { toolCalls: [{ name: "file_list", arguments: { path: "." } }] },
      { text: "I listed the folder twice but did not find the report." },
    );
    const answer = await bot.send("find the report");
    expect(answer).toBe(
      "(I could not finish this within 2 steps; here is where I got to.)\n\nI listed the folder twice but did not find the report.",
    );
    const partial = bot.fake.requests[3];
    expect(partial?.tool_choice).toBe("none");
    expect(partial?.messages.at(-1)?.content).toMatch(/run out of steps/);
    expect(await bot.runtime.store.sql.all("SELECT reason, class FROM capability_gaps")).toEqual([
      { reason: "step_budget", class: "capability" },
    ]);
  });

  it("no skill matches: falls back to skill-builder; no gap unless the turn fails, and then its gap says so", async () => {
    const bot = await startTestBot();
    bot.fake.enqueue(routeTo([], "deploy-kubernetes"), { text: "Here is how you would deploy it: ..." });
    await bot.send("deploy my app to kubernetes");
    expect(bot.fake.requests[1]?.messages[0]?.content).toContain("### skill-builder");
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 0 });

    bot.fake.enqueue(
      routeTo([], "read-deploy-config"),
      { toolCalls: [{ name: "file_read", arguments: { path: "k8s.yaml" } }] },
      { text: "There is no k8s.yaml here." },
    );
    await bot.send("read my deploy config");
    expect(
      await bot.runtime.store.sql.all(
        "SELECT reason, class, intent_key AS intentKey, detail, user_text AS userText FROM capability_gaps",
      ),
    ).toEqual([
      {
        reason: "tool_failure",
        class: "capability",
        intentKey: "read-deploy-config",
        detail: "k8s.yaml does not exist (no skill matched)",
        userText: "read my deploy config",
      },
    ]);
  });

  it("a routing reply that is not JSON is retried once, then treated as parse_failure", async () => {
    const bot = await startTestBot({ skills: { "write-notes": NOTES_SKILL } });
    bot.fake.enqueue(
      { text: "I think write-notes fits best" },
      { text: '```json\n{"skills": ["write-notes"], "intent_key": "Write Notes!"}\n```' },
      { text: "ok" },
    );
    await bot.send("notes please");
    expect(bot.fake.requests[1]?.messages.at(-1)?.content).toMatch(/not valid JSON/);
    expect(bot.fake.requests[2]?.messages[0]?.content).toContain("### write-notes");
    expect(await bot.runtime.store.sql.get("SELECT count(*) AS n FROM capability_gaps")).toEqual({ n: 0 });

    bot.fake.enqueue({ text: "no json" }, { text: "still none" }, { text: "answer anyway" });
    expect(await bot.send("更多笔记")).toBe("answer anyway");
    expect(
      await bot.runtime.store.sql.all("SELECT reason, intent_key AS intentKey, detail FROM capability_gaps"),
    ).toEqual([{ reason: "parse_failure", intentKey: "更多-笔记", detail: "routing reply: still none" }]);
  });

  it("drops skill names that are not in the catalog and keeps at most two", async () => {
    const bot = await startTestBot({
      skills: {
        "write-notes": NOTES_SKILL,
        "a-one": skillText("a-one", "first"),
        "b-two": skillText("b-two", "second"),
      },
    });
    bot.fake.enqueue(routeTo(["nope", "a-one", "b-two", "write-notes"], "x"), { text: "ok" });
    await bot.send("do it");
    const system = bot.fake.requests[1]?.messages[0]?.content ?? "";
    expect(system).toContain("### a-one");
    expect(system).toContain("### b-two");
    expect(system).not.toContain("### write-notes");
  });
});

describe("model failures", () => {
  it("a 500 then success: the SDK retries and the user gets the answer", async () => {
    const bot = await startTestBot({ env: { LLM_MAX_RETRIES: "1" } });
    bot.fake.enqueue({ status: 500 }, routeTo([], "greet"), { text: "Hello!" });
    expect(await bot.send("hi")).toBe("Hello!");
    expect(bot.fake.requests).toHaveLength(3);
  });

  it("a timeout: the user is told, an environment gap is recorded, the bot keeps working", async () => {
    const bot = await startTestBot({ env: { LLM_TIMEOUT_MS: "1000" } });
    bot.fake.enqueue({ text: "late", delayMs: 3_000 });
    expect(await bot.send("hi")).toBe(
      "Sorry, the model service is unavailable right now (timeout). Please try again later.",
    );
    expect(await bot.runtime.store.sql.all("SELECT reason, class, error_code AS code FROM capability_gaps")).toEqual([
      { reason: "model_failure", class: "environment", code: "timeout" },
    ]);
    bot.fake.enqueue(routeTo([], "greet"), { text: "Back again." });
    expect(await bot.send("hi again")).toBe("Back again.");
  });

  it("an unexpected failure still answers, with a trace id to report, and both messages are stored", async () => {
    const bot = await startTestBot({
      extend: () => ({
        extraSections: () => {
          throw new Error("disk on fire");
        },
      }),
    });
    bot.fake.respond((request) => (isRoutingRequest(request) ? routeTo([], "x") : { text: "fine" }));
    const answer = await bot.send("hello");
    expect(answer).toMatch(/^Sorry, something went wrong on my side \(trace tr-[0-9a-f]{16}\)/);
    const traceId = /trace (tr-[0-9a-f]+)/.exec(answer ?? "")?.[1] as string;
    expect((await bot.runtime.store.messages.byTrace(traceId)).map((row) => row.role)).toEqual(["user", "assistant"]);
  });

  it("/help lists the commands later features registered: /feedback for everyone, the skill commands for operators only", async () => {
    const bot = await startTestBot({ model: false });
    const user = await bot.send("/help", { isOperator: false });
    expect(user).toContain("\n/feedback good|bad [text] rate my last answer");
    expect(user).not.toMatch(/distill_skill|capability_gaps/);
    const operator = await bot.send("/help", { isOperator: true });
    expect(operator).toMatch(/\/capability_gaps[\s\S]*\n\/distill_skill <tag> distil[\s\S]*\n\/skill_versions <skill>/);
  });

  it("no model configured: commands work and a chat message says how to configure one", async () => {
    const bot = await startTestBot({ model: false });
    expect(await bot.send("/help")).toMatch(/^I'm Laoding/);
    expect(await bot.send("hello")).toMatch(
      /No model is configured yet.*LLM_BASE_URL, LLM_API_KEY and LLM_MODEL in .*configs\/env/,
    );
    expect(bot.fake.requests).toHaveLength(0);
  });
});

describe("conversations", () => {
  it("keeps history within the budget and folds older messages into a stored summary", async () => {
    const bot = await startTestBot({ env: { CONTEXT_CHAR_BUDGET: "1000" } });
    bot.fake.respond((request) => {
      if (isRoutingRequest(request)) return routeTo([], "chat");
      if (request.messages[0]?.content?.startsWith("Summarise a conversation"))
        return { text: "The user talked about apples and pears." };
      return { text: "x".repeat(300) };
    });
    for (const fruit of ["apples", "pears", "plums", "figs"])
      await bot.send(`tell me about ${fruit} ${"!".repeat(200)}`);
    const summaryCall = bot.fake.requests.find((request) =>
      request.messages[0]?.content?.startsWith("Summarise a conversation"),
    );
    expect(summaryCall?.messages[1]?.content).toContain("tell me about apples");
    const session = (await bot.runtime.store.sql.get<{ summary: string; until: number }>(
      "SELECT summary, summary_until_message_id AS until FROM sessions",
    )) as { summary: string; until: number };
    expect(session.summary).toBe("The user talked about apples and pears.");
    const last = bot.fake.requests.at(-1);
    expect(last?.messages[0]?.content).toContain(
      "## Earlier in this conversation\nThe user talked about apples and pears.",
    );
    const shown =
      last?.messages
        .slice(1)
        .map((message) => message.content ?? "")
        .join("") ?? "";
    expect(shown).not.toContain("apples !");
    expect(shown).toContain("tell me about figs");
    expect(shown.length).toBeLessThan(1_000 + 600);
  });

  it("/new starts a fresh session and the old one stays in the database", async () => {
    const bot = await startTestBot();
    bot.fake.respond((request) => (isRoutingRequest(request) ? routeTo([], "chat") : { text: "noted" }));
    await bot.send("my name is Ada");
    expect(await bot.send("/new")).toMatch(/fresh conversation/);
    await bot.send("what is my name?");
    const last = bot.fake.requests.at(-1);
    expect(last?.messages.map((message) => message.content).join("\n")).not.toContain("Ada");
    const sessions = await bot.runtime.store.sql.all("SELECT status FROM sessions ORDER BY id");
    expect(sessions).toEqual([{ status: "closed" }, { status: "active" }]);
  });

  it("drops a re-delivered message (same channel message id)", async () => {
    const bot = await startTestBot();
    bot.fake.respond((request) => (isRoutingRequest(request) ? routeTo([], "chat") : { text: "once" }));
    expect(await bot.send("hi", { messageId: "same" })).toBe("once");
    expect(await bot.send("hi", { messageId: "same" })).toBeUndefined();
    expect(bot.fake.requests).toHaveLength(2);
  });

  it("runs two sessions in parallel while one session stays in order", async () => {
    const bot = await startTestBot();
    const order: string[] = [];
    bot.fake.respond(async (request) => {
      const user = [...request.messages].reverse().find((message) => message.role === "user")?.content ?? "";
      if (isRoutingRequest(request)) return routeTo([], "chat");
      order.push(`start ${user}`);
      await new Promise((resolve) => setTimeout(resolve, user.startsWith("slow") ? 400 : 50));
      order.push(`end ${user}`);
      return { text: `re: ${user}` };
    });
    const [a1, a2, b1] = await Promise.all([
      bot.send("slow one", { chatId: "A" }),
      bot.send("fast two", { chatId: "A" }),
      bot.send("other chat", { chatId: "B" }),
    ]);
    expect([a1, a2, b1]).toEqual(["re: slow one", "re: fast two", "re: other chat"]);
    // In chat A, the second message starts only after the first ended.
    expect(order.indexOf("start fast two")).toBeGreaterThan(order.indexOf("end slow one"));
    // Chat B did not wait for chat A.
    expect(order.indexOf("end other chat")).toBeLessThan(order.indexOf("end slow one"));
  });
});

describe("commands", () => {
  it("/help, /start, /context and unknown commands are answered without the model", async () => {
    const bot = await startTestBot({ skills: { "write-notes": NOTES_SKILL } });
    expect(await bot.send("/start")).toMatch(/^Hello, I'm Laoding\. The team's general assistant\./);
    expect(await bot.send("/context")).toBe("Nothing has been sent to the model in this conversation yet.");
    expect(await bot.send("/frobnicate")).toBe("Unknown command /frobnicate. Send /help for the commands I know.");
    bot.fake.enqueue(routeTo(["write-notes"], "notes"), { text: "ok" });
    await bot.send("notes");
    const context = await bot.send("/context");
    expect(context).toMatch(/^Last turn's prompt \(\d+ characters, skills: write-notes\):/);
    expect(context).toMatch(
      /- persona: \d+ \([^\n]+\)\n- skills: \d+ \([^\n]+\)\n- library-signpost: \d+ \([^\n]+\)\n- tool-use: \d+/,
    );
    // Each section says where it comes from and its budget, from the one list that composes the prompt.
    expect(context).toContain("- skills: ");
    expect(context).toMatch(/- skills: \d+ \(the routed skills' SKILL\.md bodies[^;]*; at most 2 skills\)/);
    expect(bot.fake.requests).toHaveLength(2);
    expect(existsSync(bot.layout.databaseFile)).toBe(true);
  });

  it("in Chinese, /help lists /start and /start does not mix in an English description", async () => {
    const bot = await startTestBot({ env: { BOT_LOCALE: "zh" } });
    expect(await bot.send("/help")).toMatch(/\/start 介绍我自己/);
    expect(await bot.send("/start")).toBe("你好，我是 Laoding。\n发送 /help 查看我能做什么。");
  });

  it("speaks Chinese by default", async () => {
    const bot = await startTestBot({ env: { BOT_LOCALE: "zh" } });
    expect(await bot.send("/new")).toBe("好的，已开始新的对话。之前的内容我不会再参考。");
  });
});

describe("steering a turn", () => {
  it("reports progress, and a cancel during a tool call kills the command and ends the turn as cancelled", async () => {
    const bot = await startTestBot({ env: { ALLOWED_COMMANDS: "sleep,ls" } });
    bot.fake.enqueue(routeTo([], "wait-a-while"), {
      toolCalls: [{ name: "shell_exec", arguments: { command: "sleep 47" } }],
    });
    const controller = new AbortController();
    const progress: unknown[] = [];
    const answer = await bot.send(
      "wait for me",
      {},
      {
        signal: controller.signal,
        onProgress: (state) => {
          progress.push(state);
          // The tool call has gone out: give the command a moment to start, then cancel.
          if (state.state === "tool") setTimeout(() => controller.abort(), 500);
        },
      },
    );
    expect(answer).toBe("(Cancelled.)");
    expect(progress).toEqual([
      { state: "routing" },
      { state: "thinking", step: 1 },
      { state: "tool", tool: "shell.exec" },
    ]);
    // No model call after the cancel, no capability gap, the command is gone.
    expect(bot.fake.requests).toHaveLength(2);
    expect(
      await bot.runtime.store.sql.get("SELECT COUNT(*) AS n FROM capability_gaps WHERE reason = 'tool_failure'"),
    ).toEqual({ n: 0 });
    expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })).not.toMatch(/^sleep 47/m);
    const last = await bot.runtime.store.sql.get("SELECT role, kind, content FROM messages ORDER BY id DESC LIMIT 1");
    expect(last).toEqual({ role: "assistant", kind: "chat", content: "(Cancelled.)" });
    // The session goes on.
    bot.fake.enqueue(routeTo([], "greet"), { text: "Still here." });
    expect(await bot.send("hello?")).toBe("Still here.");
  });

  it("a turn past TURN_TIMEOUT_MS is stopped and the user is told what to do", async () => {
    const bot = await startTestBot({ env: { TURN_TIMEOUT_MS: "1000" } });
    bot.fake.enqueue(routeTo([], "slow"), { text: "too late", delayMs: 4_000 });
    expect(await bot.send("take your time")).toMatch(
      /^Sorry, this took longer than 1 s, so I stopped\. .*TURN_TIMEOUT_MS/,
    );
  });

  it("each retry of the model is shown, and a refused key says who must fix what instead of 'try later'", async () => {
    const bot = await startTestBot({ env: { LLM_MAX_RETRIES: "1" } });
    bot.fake.enqueue({ status: 503 }, routeTo([], "greet"), { text: "Hi." });
    const progress: unknown[] = [];
    expect(await bot.send("hi", {}, { onProgress: (state) => progress.push(state) })).toBe("Hi.");
    expect(progress).toEqual([
      { state: "routing" },
      { state: "retrying", attempt: 2, maxAttempts: 2, reason: expect.stringMatching(/503/) },
      { state: "thinking", step: 1 },
    ]);

    bot.fake.enqueue({ status: 401 });
    const refused = await bot.send("hi again");
    expect(refused).toMatch(
      /refused the bot's API key; retrying will not help\. An operator needs to check LLM_API_KEY/,
    );
    expect(refused).not.toMatch(/try again later/i);
  });
});
