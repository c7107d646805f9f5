import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach } from "vitest";
import { createGapLoop } from "../../src/agent/gaps/gap-loop.js";
import { SkillCatalog } from "../../src/knowledge/skill-catalog.js";
import { writeDraftIfMissing } from "../../src/knowledge/skill-draft.js";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/llm/chat-model.js";
import type { Store } from "../../src/store/store.js";
import { tempDir } from "./temp-dir.js";
import { openTestStore, type Engine } from "./test-store.js";

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/** A model that answers from a function and records every request. */
export function scriptedModel(
  answer: (request: ChatRequest) => string | Promise<string>,
): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    model: "scripted",
    requests,
    async complete(request): Promise<ChatResponse> {
      requests.push(request);
      return { content: await answer(request), toolCalls: [], finishReason: "stop", model: "scripted" };
    },
  };
}

/** A gap loop over a fresh store (`engine`, SQLite by default: `laoding.db` in `root`). */
export async function gapLoopSetup(
  options: { model?: ChatModel; trigger?: number; lookbackHours?: number; locale?: "zh" | "en"; engine?: Engine } = {},
) {
  const root = tempDir();
  const clock = {
    time: Date.UTC(2026, 10, 30, 12),
    now() {
      return this.time;
    },
  };
  const store = await openTestStore(options.engine ?? "sqlite", { clock, dir: root });
  stores.push(store);
  const baseDir = join(root, "skills");
  const ownDir = join(root, "own");
  mkdirSync(baseDir, { recursive: true });
  mkdirSync(ownDir, { recursive: true });
  const catalog = new SkillCatalog(
    [
      { dir: baseDir, source: "base" },
      { dir: ownDir, source: "agent" },
    ],
    pino({ level: "silent" }),
  );
  const loop = createGapLoop({
    store,
    catalog: () => catalog,
    writeDraft: (_agentId, name, text) => Promise.resolve(writeDraftIfMissing(ownDir, name, text)),
    model: options.model,
    settings: {
      triggerCount: options.trigger ?? 3,
      lookbackHours: options.lookbackHours ?? 72,
      locale: options.locale ?? "en",
    },
    logger: pino({ level: "silent" }),
    clock,
  });
  let trace = 0;
  const session = async (id: number) => (await store.sessions.activeSession("main", "test", `chat-${id}`)).id;
  /** Records one gap in a fresh trace and runs the after-turn evaluation. */
  const fail = async (gap: {
    session: number;
    intentKey: string;
    reason?: string;
    errorCode?: string;
    detail?: string;
    text?: string;
  }) => {
    trace += 1;
    const traceId = `tr-${trace}`;
    await loop.recordGap({
      agentId: "main",
      sessionId: await session(gap.session),
      traceId,
      intentKey: gap.intentKey,
      reason: (gap.reason ?? "no_skill") as "no_skill",
      userText: gap.text ?? `please ${gap.intentKey.replace(/-/g, " ")} (${trace})`,
      userId: `u${gap.session}`,
      ...(gap.errorCode ? { errorCode: gap.errorCode } : {}),
      ...(gap.detail ? { detail: gap.detail } : {}),
    });
    return loop.afterTurn({
      traceId,
      sessionId: 1,
      sessionKey: "main:test:x",
      kind: "answered",
      answer: "",
      message: { channel: "test", chatId: "x", userId: "u", text: "", agentId: "main", isOperator: true },
    });
  };
  const writeSkill = (dir: string, name: string, description: string) => {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n\nBody of ${name}.\n`,
    );
    catalog.reload();
  };
  return { root, store, clock, catalog, loop, fail, baseDir, ownDir, writeSkill };
}
