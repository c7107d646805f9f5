/** Sessions, messages, gaps, gap clusters, model calls, agent settings and imported rows, on SQLite and PostgreSQL. */
import { describe, expect, it } from "vitest";
import { GAP_DETAIL_MAX_CHARS, GAP_USER_TEXT_MAX_CHARS, type NewGap } from "../../src/store/gaps-store.js";
import { STALE_DRAFT_CLAIM_MS } from "../../src/store/gap-clusters-store.js";
import type { Store } from "../../src/store/store.js";
import { openTestStore, STORE_ENGINES } from "../helpers/test-store.js";

describe.each(STORE_ENGINES)("core repositories on %s", (engine) => {
  let now = 1_700_000_000_000;
  const clock = { now: () => now };
  const withStore = async (work: (store: Store) => Promise<void>): Promise<void> => {
    now = 1_700_000_000_000;
    const store = await openTestStore(engine, { clock });
    try {
      await work(store);
    } finally {
      await store.close();
    }
  };

  it("sessions: one active session per chat, closed ones kept, summaries and imported sessions", () =>
    withStore(async (store) => {
      expect(await store.sessions.findActive("main", "telegram", "5")).toBeUndefined();
      const first = await store.sessions.activeSession("main", "telegram", "5");
      expect(first).toEqual({
        id: first.id,
        agentId: "main",
        channel: "telegram",
        chatId: "5",
        status: "active",
        summary: null,
        summaryUntilMessageId: null,
        createdAt: now,
        updatedAt: now,
      });
      expect((await store.sessions.activeSession("main", "telegram", "5")).id).toBe(first.id);
      expect((await store.sessions.findActive("main", "telegram", "5"))?.id).toBe(first.id);
      const other = await store.sessions.activeSession("main", "telegram", "6");
      expect(other.id).toBeGreaterThan(first.id);

      now += 10;
      await store.sessions.setSummary(first.id, "talked about tea", 42);
      expect(await store.sessions.get(first.id)).toMatchObject({
        summary: "talked about tea",
        summaryUntilMessageId: 42,
        updatedAt: now,
      });

      now += 10;
      expect((await store.sessions.closeActive("main", "telegram", "5"))?.id).toBe(first.id);
      expect(await store.sessions.get(first.id)).toMatchObject({ status: "closed", updatedAt: now });
      expect(await store.sessions.closeActive("main", "telegram", "5")).toBeUndefined();
      expect(await store.sessions.findActive("main", "telegram", "5")).toBeUndefined();
      const next = await store.sessions.activeSession("main", "telegram", "5");
      expect(next.id).toBeGreaterThan(other.id);
      expect(await store.sessions.get(99_999)).toBeUndefined();

      const imported = await store.sessions.createImported({
        agentId: "main",
        channel: "telegram",
        chatId: "5",
        status: "closed",
        createdAt: 100,
        updatedAt: 200,
      });
      expect(imported).toMatchObject({ status: "closed", createdAt: 100, updatedAt: 200, summary: null });
      expect(imported.id).toBeGreaterThan(next.id);
      // The chat keeps one active session: an imported active one for it is refused.
      await expect(
        store.sessions.createImported({
          agentId: "main",
          channel: "telegram",
          chatId: "5",
          status: "active",
          createdAt: 1,
          updatedAt: 2,
        }),
      ).rejects.toThrow();

      expect(await store.sessions.messageCount(next.id)).toBe(0);
      await store.messages.append({ sessionId: next.id, role: "user", content: "hi", traceId: "t" });
      await store.messages.append({ sessionId: next.id, role: "assistant", content: "hello", traceId: "t" });
      expect(await store.sessions.messageCount(next.id)).toBe(2);
    }));

  it("sessions: concurrent first messages of a chat share one session", () =>
    withStore(async (store) => {
      const sessions = await Promise.all([1, 2, 3].map(() => store.sessions.activeSession("main", "feishu", "c")));
      expect(new Set(sessions.map((session) => session.id)).size).toBe(1);
      expect(sessions[0]?.status).toBe("active");
    }));

  it("messages: increasing ids, dedupe keys, chat vs scratch, traces, imports", () =>
    withStore(async (store) => {
      const session = await store.sessions.activeSession("main", "telegram", "5");
      const first = await store.messages.append({
        sessionId: session.id,
        role: "user",
        content: "hi",
        traceId: "t1",
        userId: "u1",
        dedupeKey: "telegram:5:1",
      });
      expect(first).toBeTypeOf("number");
      expect(
        await store.messages.append({
          sessionId: session.id,
          role: "user",
          content: "hi again",
          traceId: "t1",
          dedupeKey: "telegram:5:1",
        }),
      ).toBeUndefined();
      expect(await store.messages.seen("telegram:5:1")).toBe(true);
      expect(await store.messages.seen("telegram:5:2")).toBe(false);
      const scratch = await store.messages.append({
        sessionId: session.id,
        role: "assistant",
        kind: "scratch",
        content: "",
        toolCalls: [{ id: "c1", name: "file.read" }],
        traceId: "t1",
      });
      const tool = await store.messages.append({
        sessionId: session.id,
        role: "tool",
        kind: "scratch",
        content: "{}",
        toolCallId: "c1",
        traceId: "t1",
      });
      now += 5;
      const answer = await store.messages.append({
        sessionId: session.id,
        role: "assistant",
        content: "hello",
        traceId: "t2",
      });
      // Messages without a key never collide.
      const again = await store.messages.append({
        sessionId: session.id,
        role: "assistant",
        content: "hello",
        traceId: "t2",
      });
      const ids = [first, scratch, tool, answer, again] as number[];
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(5);

      expect((await store.messages.chatAfter(session.id)).map((row) => row.id)).toEqual([first, answer, again]);
      expect((await store.messages.chatAfter(session.id, first as number)).map((row) => row.id)).toEqual([
        answer,
        again,
      ]);
      expect(await store.messages.bySession(session.id)).toHaveLength(5);
      const trace = await store.messages.byTrace("t1");
      expect(trace.map((row) => row.id)).toEqual([first, scratch, tool]);
      expect(trace[0]).toEqual({
        id: first,
        sessionId: session.id,
        role: "user",
        kind: "chat",
        content: "hi",
        toolCalls: null,
        toolCallId: null,
        traceId: "t1",
        userId: "u1",
        createdAt: 1_700_000_000_000,
      });
      expect(JSON.parse(trace[1]?.toolCalls ?? "null")).toEqual([{ id: "c1", name: "file.read" }]);
      expect(trace[2]).toMatchObject({ role: "tool", kind: "scratch", toolCallId: "c1" });

      const imported = await store.messages.importRow({
        sessionId: session.id,
        role: "user",
        content: "old",
        traceId: "import",
        createdAt: 123,
        dedupeKey: "import:go:messages:7",
      });
      expect(imported).toBeGreaterThan(again as number);
      expect(
        await store.messages.importRow({
          sessionId: session.id,
          role: "user",
          content: "old",
          traceId: "import",
          createdAt: 123,
          dedupeKey: "import:go:messages:7",
        }),
      ).toBeUndefined();
      expect((await store.messages.byTrace("import")).map((row) => [row.id, row.createdAt])).toEqual([[imported, 123]]);
    }));

  it("messages: of two concurrent appends with one dedupe key, one is stored", () =>
    withStore(async (store) => {
      const session = await store.sessions.activeSession("main", "telegram", "5");
      const results = await Promise.all(
        [1, 2, 3].map((n) =>
          store.messages.append({
            sessionId: session.id,
            role: "user",
            content: `copy ${n}`,
            traceId: `t${n}`,
            dedupeKey: "k",
          }),
        ),
      );
      expect(results.filter((id) => id !== undefined)).toHaveLength(1);
      expect(await store.messages.bySession(session.id)).toHaveLength(1);
    }));

  const gap = (fields: Partial<NewGap> = {}): NewGap => ({
    agentId: "main",
    traceId: "t1",
    intentKey: "weather",
    reason: "no_tool",
    gapClass: "capability",
    ...fields,
  });

  it("gaps: recorded with increasing ids, capped text, by trace, recent and counted since a time", () =>
    withStore(async (store) => {
      const session = await store.sessions.activeSession("main", "telegram", "5");
      const first = await store.gaps.record(
        gap({
          sessionId: session.id,
          rawIntentKey: "weather.today",
          tool: "web.fetch",
          errorCode: "E1",
          detail: "d".repeat(GAP_DETAIL_MAX_CHARS + 50),
          userText: "u".repeat(GAP_USER_TEXT_MAX_CHARS + 50),
          userId: "u1",
        }),
      );
      now += 10;
      const second = await store.gaps.record(gap({ traceId: "t2", gapClass: "environment" }));
      const old = await store.gaps.importRow({ ...gap({ traceId: "t3" }), createdAt: 5 });
      expect(second).toBeGreaterThan(first);
      expect(old).toBeGreaterThan(second);

      const row = await store.gaps.get(first);
      expect(row).toMatchObject({
        id: first,
        agentId: "main",
        sessionId: session.id,
        traceId: "t1",
        intentKey: "weather",
        rawIntentKey: "weather.today",
        reason: "no_tool",
        gapClass: "capability",
        tool: "web.fetch",
        errorCode: "E1",
        userId: "u1",
        createdAt: 1_700_000_000_000,
      });
      expect(row?.detail).toHaveLength(GAP_DETAIL_MAX_CHARS);
      expect(row?.userText).toHaveLength(GAP_USER_TEXT_MAX_CHARS);
      expect(await store.gaps.get(second)).toMatchObject({
        sessionId: null,
        rawIntentKey: null,
        tool: null,
        detail: null,
        userText: null,
        gapClass: "environment",
      });
      expect(await store.gaps.get(old)).toMatchObject({ createdAt: 5 });
      expect(await store.gaps.get(99_999)).toBeUndefined();

      expect((await store.gaps.byTrace("t1")).map((g) => g.id)).toEqual([first]);
      expect((await store.gaps.recent("main", 0)).map((g) => g.id)).toEqual([old, second, first]);
      expect((await store.gaps.recent("main", 0, 1)).map((g) => g.id)).toEqual([old]);
      expect((await store.gaps.recent("main", 1_700_000_000_000)).map((g) => g.id)).toEqual([second, first]);
      expect(await store.gaps.recent("other", 0)).toEqual([]);
      expect(await store.gaps.countSince("main", 0)).toBe(3);
      expect(await store.gaps.countSince("main", 1_700_000_000_001)).toBe(1);
      expect(await store.gaps.countSince("other", 0)).toBe(0);
    }));

  it("gap clusters: stats, top clusters, samples and intent keys", () =>
    withStore(async (store) => {
      const a = await store.sessions.activeSession("main", "telegram", "a");
      const b = await store.sessions.activeSession("main", "telegram", "b");
      await store.gaps.record(gap({ sessionId: a.id, userId: "u1", userText: "first" }));
      now += 1;
      await store.gaps.record(gap({ sessionId: a.id, userId: "u1", userText: "second" }));
      now += 1;
      // No user: the session stands for one.
      await store.gaps.record(gap({ sessionId: b.id, userText: "third", tool: "t", errorCode: "E" }));
      now += 1;
      await store.gaps.record(gap({ intentKey: "stocks", sessionId: b.id }));
      await store.gaps.record(gap({ agentId: "other" }));

      const key = { agentId: "main", intentKey: "weather", reason: "no_tool" };
      expect(await store.clusters.cluster(key, 0)).toEqual({
        ...key,
        gapClass: "capability",
        count: 3,
        sessions: 2,
        users: 2,
        firstSeen: 1_700_000_000_000,
        lastSeen: 1_700_000_000_002,
      });
      expect(await store.clusters.cluster(key, 1_700_000_000_001)).toMatchObject({
        count: 2,
        sessions: 2,
        users: 2,
        firstSeen: 1_700_000_000_001,
      });
      expect(await store.clusters.cluster({ ...key, intentKey: "nothing" }, 0)).toBeUndefined();
      expect(await store.clusters.cluster(key, now + 1)).toBeUndefined();

      const top = await store.clusters.top("main", 0, 10);
      expect(top).toEqual([
        {
          agentId: "main",
          intentKey: "weather",
          reason: "no_tool",
          gapClass: "capability",
          count: 3,
          sessions: 2,
          users: 2,
          firstSeen: 1_700_000_000_000,
          lastSeen: 1_700_000_000_002,
        },
        {
          agentId: "main",
          intentKey: "stocks",
          reason: "no_tool",
          gapClass: "capability",
          count: 1,
          sessions: 1,
          users: 1,
          firstSeen: 1_700_000_000_003,
          lastSeen: 1_700_000_000_003,
        },
      ]);
      expect(await store.clusters.top("main", 0, 1)).toHaveLength(1);

      expect(await store.clusters.samples(key, 0)).toEqual([
        { userText: "third", detail: null, tool: "t", errorCode: "E" },
        { userText: "second", detail: null, tool: null, errorCode: null },
        { userText: "first", detail: null, tool: null, errorCode: null },
      ]);
      expect(await store.clusters.samples(key, 0, 1)).toHaveLength(1);

      expect(await store.clusters.keyWithSignature("main", "sig-w")).toBeUndefined();
      await store.clusters.rememberKey("main", "weather", "sig-w");
      now += 100;
      await store.clusters.rememberKey("main", "weather.today", "sig-w");
      expect(await store.clusters.keyWithSignature("main", "sig-w")).toBe("weather.today");
      now += 100;
      // Remembering a key again moves its last sighting.
      await store.clusters.rememberKey("main", "weather", "sig-w");
      expect(await store.clusters.keyWithSignature("main", "sig-w")).toBe("weather");
      expect(await store.clusters.recentKeys("main", 0)).toEqual([
        { intentKey: "weather", signature: "sig-w" },
        { intentKey: "weather.today", signature: "sig-w" },
      ]);
      expect(await store.clusters.recentKeys("main", now)).toEqual([{ intentKey: "weather", signature: "sig-w" }]);
      expect(await store.clusters.recentKeys("other", 0)).toEqual([]);
    }));

  it("gap clusters: one draft per intent, claimed once, settled or released", () =>
    withStore(async (store) => {
      expect(await store.clusters.claimDraft("main", "weather", "weather-skill", 4)).toBe(true);
      expect(await store.clusters.claimDraft("main", "weather", "weather-skill-2", 5)).toBe(false);
      expect(await store.clusters.claimDraft("other", "weather", "weather-skill", 4)).toBe(true);
      expect(await store.clusters.draftFor("main", "weather")).toMatchObject({
        agentId: "main",
        intentKey: "weather",
        status: "drafting",
        skillName: "weather-skill",
        path: null,
        clusterSize: 4,
        reason: null,
        createdAt: now,
      });

      // Concurrent claims for a new intent: exactly one wins.
      const claims = await Promise.all(
        [1, 2, 3, 4].map((n) => store.clusters.claimDraft("main", "stocks", `stocks-${n}`, n)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);

      // Releasing gives the intent back; a settled draft is not released.
      await store.clusters.releaseDraft("main", "weather");
      expect(await store.clusters.draftFor("main", "weather")).toBeUndefined();
      expect(await store.clusters.claimDraft("main", "weather", "weather-skill", 6)).toBe(true);
      await store.clusters.settleDraft("main", "weather", {
        status: "drafted",
        skillName: "weather-now",
        path: "skills/weather-now/SKILL.md",
      });
      await store.clusters.releaseDraft("main", "weather");
      expect(await store.clusters.draftFor("main", "weather")).toMatchObject({
        status: "drafted",
        skillName: "weather-now",
        path: "skills/weather-now/SKILL.md",
        clusterSize: 6,
      });
      expect(await store.clusters.claimDraft("main", "weather", "again", 7)).toBe(false);

      // A claim left 'drafting' by a turn (or replica) that died is taken over once it is stale, never before.
      expect(await store.clusters.claimDraft("main", "orphan", "orphan-1", 3)).toBe(true);
      now += STALE_DRAFT_CLAIM_MS - 1;
      expect(await store.clusters.claimDraft("main", "orphan", "orphan-2", 4)).toBe(false);
      now += 2;
      const takeovers = await Promise.all(
        [5, 6].map((n) => store.clusters.claimDraft("main", "orphan", `orphan-${n}`, n)),
      );
      expect(takeovers.filter(Boolean)).toHaveLength(1);
      expect(await store.clusters.draftFor("main", "orphan")).toMatchObject({ status: "drafting", createdAt: now });
      await store.clusters.settleDraft("main", "orphan", { status: "rejected", skillName: "orphan", reason: "test" });
      await store.clusters.settleDraft("main", "stocks", {
        status: "rejected",
        skillName: "stocks",
        reason: "too vague",
      });

      const drafts = await store.clusters.drafts("main");
      expect(drafts.map((draft) => [draft.intentKey, draft.status, draft.reason])).toEqual([
        ["stocks", "rejected", "too vague"],
        ["weather", "drafted", null],
        ["orphan", "rejected", "test"],
      ]);
      expect(drafts[0]?.id).toBeLessThan(drafts[1]?.id as number);
    }));

  it("model calls: recorded per trace in order, flags as 1/0", () =>
    withStore(async (store) => {
      await store.modelCalls.record({
        traceId: "t1",
        agentId: "main",
        purpose: "chat",
        model: "m1",
        promptTokens: 10,
        completionTokens: 5,
        totalTokens: 15,
        ok: true,
        durationMs: 12.6,
      });
      await store.modelCalls.record({
        traceId: "t1",
        purpose: "summary",
        model: "m2",
        ok: false,
        errorKind: "timeout",
        durationMs: 3,
      });
      await store.modelCalls.record({ traceId: "t2", purpose: "chat", model: "m1", ok: true, durationMs: 1 });
      expect(await store.modelCalls.byTrace("t1")).toEqual([
        {
          purpose: "chat",
          model: "m1",
          promptTokens: 10,
          completionTokens: 5,
          totalTokens: 15,
          ok: 1,
          errorKind: null,
        },
        {
          purpose: "summary",
          model: "m2",
          promptTokens: null,
          completionTokens: null,
          totalTokens: null,
          ok: 0,
          errorKind: "timeout",
        },
      ]);
      expect(await store.modelCalls.byTrace("none")).toEqual([]);
      expect(
        await store.sql.get<{ durationMs: number }>(
          "SELECT duration_ms AS durationMs FROM model_calls WHERE purpose = ?",
          ["chat"],
        ),
      ).toEqual({ durationMs: 13 });
    }));

  it("agent settings: the library override is set, changed and cleared", () =>
    withStore(async (store) => {
      expect(await store.agentSettings.experienceLibrary("main")).toBeUndefined();
      await store.agentSettings.setExperienceLibrary("main", true);
      expect(await store.agentSettings.experienceLibrary("main")).toBe(true);
      await store.agentSettings.setExperienceLibrary("main", false);
      expect(await store.agentSettings.experienceLibrary("main")).toBe(false);
      expect(await store.agentSettings.experienceLibrary("other")).toBeUndefined();
      await store.agentSettings.setExperienceLibrary("main", undefined);
      expect(await store.agentSettings.experienceLibrary("main")).toBeUndefined();
    }));

  it("imported rows: remembered once, found and counted", () =>
    withStore(async (store) => {
      const row = {
        agentId: "main",
        source: "go:/old",
        importKey: "messages:7:abc",
        targetTable: "messages",
        targetId: 12,
        contentSha256: "abc",
      };
      expect(await store.importedRows.remember(row)).toBe(true);
      expect(await store.importedRows.remember({ ...row, targetId: 13 })).toBe(false);
      expect(
        await store.importedRows.remember({
          ...row,
          importKey: "messages:8:def",
          targetId: null,
          contentSha256: "def",
        }),
      ).toBe(true);
      expect(await store.importedRows.remember({ ...row, source: "go:/other" })).toBe(true);
      expect(await store.importedRows.find("main", "go:/old", "messages:7:abc")).toEqual(row);
      expect(await store.importedRows.find("main", "go:/old", "messages:8:def")).toMatchObject({ targetId: null });
      expect(await store.importedRows.find("main", "go:/old", "messages:9")).toBeUndefined();
      expect(await store.importedRows.count("main", "go:/old", "messages")).toBe(2);
      expect(await store.importedRows.count("main", "go:/old", "capability_gaps")).toBe(0);
    }));
});
