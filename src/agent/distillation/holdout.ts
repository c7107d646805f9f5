/**
 * The holdout: a deterministic share of eligible tasks is shown nothing. A task is drawn by
 * a hash of where it sits in the conversation — the agent, the chat (channel and chat id),
 * the task's number among the chat's user messages, across sessions — and
 * DISTILL_HOLDOUT_SEED, never by its random trace id, so a conversation replayed into a
 * fresh database is held out at the same tasks.
 */
import { createHash } from "node:crypto";
import type { Store } from "../../store/store.js";

export const DEFAULT_HOLDOUT_PERCENT = 10;

/** A task's place: its chat and its number there (1 for the chat's first user message). */
export type HoldoutPlace = { agentId: string; channel: string; chatId: string; sequence: number };

/** The text hashed for a task; the seed changes every draw at once. */
export function holdoutKey(place: HoldoutPlace, seed: string): string {
  return JSON.stringify([seed, place.agentId, place.channel, place.chatId, place.sequence]);
}

export function isHoldout(key: string, percent: number): boolean {
  const bucket = createHash("sha256").update(key).digest().readUInt32BE(0) % 100;
  return bucket < percent;
}

/**
 * What a task's draw hashes: its place in its chat (from its stored user message) and the
 * seed. Only a caller outside the bot's turn, with no stored message, falls back to the
 * trace id.
 */
export async function taskHoldoutKey(store: Store, traceId: string, seed: string): Promise<string> {
  const place = await store.messages.chatPlace(traceId);
  return place ? holdoutKey(place, seed) : traceId;
}
