/**
 * The holdout is reproducible (issue 27): drawn from the agent, the chat and the task's
 * number in that chat (and DISTILL_HOLDOUT_SEED), never from the random trace id, so the
 * same conversation replayed into a fresh database is held out at the same tasks.
 */
import { randomUUID } from "node:crypto";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createDistillationLoop } from "../../../src/agent/distillation/distillation-loop.js";
import { contentHash } from "../../../src/agent/distillation/lesson-rules.js";
import type { Store } from "../../../src/store/store.js";
import { isRoutingRequest, routeTo, type RecordedRequest, type ScriptedReply } from "../../fakes/openai-server.js";
import { startTestBot } from "../../helpers/bot.js";
import { openTestStore, STORE_ENGINES, type Engine } from "../../helpers/test-store.js";

const LESSON = "For deploy gateway, the tls handshake needs --force-tls; without it the step fails.";
const ASK = "Please deploy gateway for project atlas";

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function storeWithLesson(engine: Engine): Promise<Store> {
  const store = await openTestStore(engine);
  opened.push(store);
  await store.experiences.add({
    agentId: "main",
    source: "manual",
    summary: LESSON,
    category: "pitfall",
    confidence: 0.9,
    createdBy: "test",
    contentHash: contentHash(LESSON),
    tags: ["deploy", "gateway"],
    status: "active",
  });
  return store;
}

type Task = { chat: number; index: number };

/**
 * Plays tasks into a fresh store the way a turn stores them (the user's message first, a
 * command and the answer around it, a new session half-way through each chat), with fresh
 * random trace ids; returns each task's arm by chat and number.
 */
async function play(engine: Engine, seed: string, order: readonly Task[], tasksPerChat: number) {
  const store = await storeWithLesson(engine);
  const loop = createDistillationLoop({
    store,
    model: undefined,
    settings: { locale: "en", holdoutPercent: 10, settleQuietMs: 60_000, holdoutSeed: seed },
    logger: pino({ level: "silent" }),
    clock: { now: () => Date.now() },
  });
  const arms = new Map<string, string>();
  for (const { chat, index } of order) {
    const channel = chat % 2 === 0 ? "telegram" : "feishu";
    const chatId = `chat-${Math.floor(chat / 2)}`;
    if (index === Math.floor(tasksPerChat / 2)) await store.sessions.closeActive("main", channel, chatId);
    const session = await store.sessions.activeSession("main", channel, chatId);
    if (index % 3 === 1)
      await store.messages.append({
        sessionId: session.id,
        role: "user",
        kind: "command",
        content: "/context",
        traceId: `tr-${randomUUID()}`,
      });
    const traceId = `tr-${randomUUID()}`;
    await store.messages.append({ sessionId: session.id, role: "user", kind: "chat", content: ASK, traceId });
    await loop.lessons.select({ agentId: "main", traceId, sessionKey: `main:${channel}:${chatId}`, userText: ASK });
    await store.messages.append({ sessionId: session.id, role: "assistant", kind: "chat", content: "ok", traceId });
    const [row] = await store.injections.byTrace(traceId);
    arms.set(`${chat}/${index}`, row?.arm ?? "none");
  }
  return arms;
}

const tasks = (chats: number, perChat: number): Task[] =>
  Array.from({ length: chats }, (_, chat) => Array.from({ length: perChat }, (_, index) => ({ chat, index }))).flat();

describe.each(STORE_ENGINES)("reproducible holdout (%s)", (engine) => {
  it("numbers a task's message within its chat, across sessions, counting only user chat messages", async () => {
    const store = await storeWithLesson(engine);
    const say = async (chatId: string, traceId: string, kind: "chat" | "command" = "chat") => {
      const session = await store.sessions.activeSession("main", "telegram", chatId);
      await store.messages.append({ sessionId: session.id, role: "user", kind, content: "hi", traceId });
      await store.messages.append({ sessionId: session.id, role: "assistant", kind, content: "ok", traceId });
    };
    await say("a", "t1");
    await say("b", "t2");
    await say("a", "t3", "command");
    await store.sessions.closeActive("main", "telegram", "a");
    await say("a", "t4");
    expect(await store.messages.chatPlace("t1")).toEqual({
      agentId: "main",
      channel: "telegram",
      chatId: "a",
      sequence: 1,
    });
    expect(await store.messages.chatPlace("t2")).toEqual({
      agentId: "main",
      channel: "telegram",
      chatId: "b",
      sequence: 1,
    });
    expect(await store.messages.chatPlace("t4")).toEqual({
      agentId: "main",
      channel: "telegram",
      chatId: "a",
      sequence: 2,
    });
    expect(await store.messages.chatPlace("t3")).toBeUndefined();
    expect(await store.messages.chatPlace("nope")).toBeUndefined();
  });

  it("holds out the same tasks when the conversation is replayed into a fresh database; another seed draws others", async () => {
    const perChat = 10;
    const chatMajor = tasks(24, perChat);
    // The same conversations, the chats interleaved differently: only each chat's own order matters.
    const interleaved = [...chatMajor].sort((a, b) => a.index - b.index || b.chat - a.chat);
    const first = await play(engine, "", chatMajor, perChat);
    const replayed = await play(engine, "", interleaved, perChat);
    expect([...replayed.entries()].sort()).toEqual([...first.entries()].sort());

    const held = [...first.values()].filter((arm) => arm === "holdout").length;
    expect(first.size).toBe(240);
    expect([...first.values()].every((arm) => arm === "holdout" || arm === "treatment")).toBe(true);
    // ~10% of 240 (the draw is fixed by the keys, so this bound never flakes).
    expect(held).toBeGreaterThanOrEqual(12);
    expect(held).toBeLessThanOrEqual(36);

    const reseeded = await play(engine, "another seed", chatMajor, perChat);
    const changed = [...first.keys()].filter((key) => first.get(key) !== reseeded.get(key)).length;
    expect(changed).toBeGreaterThan(5);
  });
});

describe("reproducible holdout through the real bot", () => {
  async function conversation(): Promise<string[]> {
    const bot = await startTestBot({ env: { DISTILL_HOLDOUT_PERCENT: "50" } });
    const isDistill = (request: RecordedRequest) =>
      request.messages[0]?.content?.startsWith("You keep a team's lessons") ?? false;
    bot.fake.respond((request): ScriptedReply => {
      if (isRoutingRequest(request)) return routeTo([], "deploy-gateway");
      if (isDistill(request)) return { text: JSON.stringify({ operations: [] }) };
      return { text: "Deployed." };
    });
    const { store } = bot.runtime;
    await store.experiences.add({
      agentId: "main",
      source: "manual",
      summary: LESSON,
      category: "pitfall",
      confidence: 0.9,
      createdBy: "test",
      contentHash: contentHash(LESSON),
      tags: ["deploy", "gateway"],
      status: "active",
    });
    for (const chatId of ["chat-1", "chat-2"])
      for (let index = 0; index < 4; index += 1) {
        if (index === 2) await bot.send("/new", { chatId });
        await bot.send(`${ASK}, step ${index}`, { chatId });
      }
    await bot.runtime.distillation?.idle();
    const rows = await store.injections.byAgent("main");
    const traces = [...new Set(rows.map((row) => row.traceId))];
    expect(traces).toHaveLength(8);
    return traces.map((traceId) => rows.find((row) => row.traceId === traceId)?.arm ?? "none");
  }

  it("gives a replayed conversation (new trace ids, fresh database) the same arms", async () => {
    // Two bots at once: each one's first turn starts its toolhost child (seconds).
    const [first, second] = await Promise.all([conversation(), conversation()]);
    expect(second).toEqual(first);
    expect(new Set(first)).toEqual(new Set(["holdout", "treatment"]));
  }, 60_000);
});
