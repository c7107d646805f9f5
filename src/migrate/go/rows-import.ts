/**
 * The Go database's rows into the store, in one transaction. Messages go into one
 * session per chat (agent, channel, chat id: the key the bot finds a chat's session by),
 * so the next message in that chat continues the Go conversation; when the chat already
 * has an active session with messages of its own, the Go history goes into a closed
 * session before it (kept for history). Gaps keep their time, their intent key is
 * normalised and merged like a live gap's (so a new gap with the same intent joins the
 * imported cluster), and Go `auto_*` drafts are recorded as drafted for their intent so
 * the gap loop does not draft them again. Every source row is remembered by its import
 * key: a second import adds nothing.
 */
import { classifyGap, type GapReason } from "../../agent/gaps/classify-gap.js";
import { canonicalIntentKey } from "../../agent/gaps/intent-merge.js";
import { normalizeIntentKey } from "../../agent/gaps/intent-key.js";
import type { Store } from "../../store/store.js";
import type { GoDatabase, GoGap, GoMessage } from "./go-database.js";
import type { SkillImport } from "./skills-import.js";

export const IMPORT_SOURCE = "go";

export type RowsContext = { agentId: string; channel: string; lookbackSinceMs: number };
export type RowsResult = { messages: number; gaps: number; sessions: number; alreadyImported: number; drafts: number };

/** Go reason names for ours; a reason not listed is stored as it is (shown as stored). */
const REASONS: Record<string, GapReason> = {
  no_skill: "no_skill",
  no_matching_skill: "no_skill",
  unmatched: "no_skill",
  parse_failure: "parse_failure",
  parse_error: "parse_failure",
  invalid_output: "parse_failure",
  tool_failure: "tool_failure",
  tool_error: "tool_failure",
  step_budget: "step_budget",
  max_steps: "step_budget",
  step_limit: "step_budget",
  model_failure: "model_failure",
  llm_error: "model_failure",
};

export function mapGapReason(reason: string): { reason: string; known: boolean } {
  const key = reason.trim().toLowerCase();
  return Object.hasOwn(REASONS, key)
    ? { reason: REASONS[key] as GapReason, known: true }
    : { reason: reason.trim(), known: false };
}

export async function importRows(
  store: Store,
  database: GoDatabase,
  drafts: SkillImport[],
  context: RowsContext,
): Promise<RowsResult> {
  return await store.transaction(async (): Promise<RowsResult> => {
    const result: RowsResult = { messages: 0, gaps: 0, sessions: 0, alreadyImported: 0, drafts: 0 };
    const sessionIds = new Map<string, number>();
    const sessionFor = async (chatId: string, first: GoMessage | GoGap): Promise<number> => {
      const known = sessionIds.get(chatId);
      if (known !== undefined) return known;
      const key = `session:${context.channel}:${chatId}`;
      const remembered = await store.importedRows.find(context.agentId, IMPORT_SOURCE, key);
      let id = remembered?.targetId ?? undefined;
      if (id === undefined || !(await store.sessions.get(id))) {
        const active = await store.sessions.findActive(context.agentId, context.channel, chatId);
        const ownHistory = active !== undefined && (await store.sessions.messageCount(active.id)) > 0;
        id =
          active && !ownHistory
            ? active.id
            : (
                await store.sessions.createImported({
                  agentId: context.agentId,
                  channel: context.channel,
                  chatId,
                  status: ownHistory ? "closed" : "active",
                  createdAt: first.createdAt,
                  updatedAt: first.createdAt,
                })
              ).id;
        await store.importedRows.remember({
          agentId: context.agentId,
          source: IMPORT_SOURCE,
          importKey: key,
          targetTable: "sessions",
          targetId: id,
          contentSha256: "",
        });
        result.sessions += 1;
      }
      sessionIds.set(chatId, id);
      return id;
    };
    for (const message of database.messages) {
      if (await store.importedRows.find(context.agentId, IMPORT_SOURCE, message.importKey)) {
        result.alreadyImported += 1;
        continue;
      }
      const sessionId = await sessionFor(message.chatId, message);
      const id = await store.messages.importRow({
        sessionId,
        role: message.role,
        content: message.content,
        traceId: message.traceId ?? `go-message-${message.rowId}`,
        ...(message.userId ? { userId: message.userId } : {}),
        createdAt: message.createdAt,
        dedupeKey: `${IMPORT_SOURCE}-import:${context.agentId}:${message.importKey}`,
      });
      await store.importedRows.remember({
        agentId: context.agentId,
        source: IMPORT_SOURCE,
        importKey: message.importKey,
        targetTable: "messages",
        targetId: id ?? null,
        contentSha256: message.hash,
      });
      if (id !== undefined) result.messages += 1;
    }
    for (const gap of database.gaps) {
      if (await store.importedRows.find(context.agentId, IMPORT_SOURCE, gap.importKey)) {
        result.alreadyImported += 1;
        continue;
      }
      const mapped = mapGapReason(gap.reason);
      const rawIntentKey = normalizeIntentKey(gap.intent, gap.userText ?? "");
      // Merged like a live gap's key, so the Go clusters and new gaps meet under one key.
      const intentKey = await canonicalIntentKey(
        store.clusters,
        context.agentId,
        rawIntentKey,
        context.lookbackSinceMs,
      );
      const details = { ...(gap.tool ? { tool: gap.tool } : {}), ...(gap.detail ? { detail: gap.detail } : {}) };
      const id = await store.gaps.importRow({
        agentId: context.agentId,
        ...(gap.chatId ? { sessionId: await sessionFor(gap.chatId, gap) } : {}),
        traceId: gap.traceId ?? `go-gap-${gap.rowId}`,
        intentKey,
        rawIntentKey: gap.intent,
        reason: mapped.reason,
        gapClass: mapped.known ? classifyGap(mapped.reason as GapReason, details) : "capability",
        ...details,
        ...(gap.userText ? { userText: gap.userText } : {}),
        ...(gap.userId ? { userId: gap.userId } : {}),
        createdAt: gap.createdAt,
      });
      await store.importedRows.remember({
        agentId: context.agentId,
        source: IMPORT_SOURCE,
        importKey: gap.importKey,
        targetTable: "capability_gaps",
        targetId: id,
        contentSha256: gap.hash,
      });
      result.gaps += 1;
    }
    for (const draft of drafts) {
      if (draft.kind !== "draft" || draft.state === "skipped" || !draft.intentKey) continue;
      // The draft exists now: the gap loop sees its intent drafted and does not write another.
      if (await store.clusters.claimDraft(context.agentId, draft.intentKey, draft.becomes, 0)) {
        await store.clusters.settleDraft(context.agentId, draft.intentKey, {
          status: "drafted",
          skillName: draft.becomes,
          path: draft.dest,
          reason: "imported from the Go LaodingBot",
        });
        result.drafts += 1;
      }
    }
    return result;
  });
}
