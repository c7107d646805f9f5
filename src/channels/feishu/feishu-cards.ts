/**
 * What a streamed Feishu answer is made of: the CardKit card (JSON 2.0, streaming mode,
 * one Markdown element holding the answer), the plain interactive card (JSON 1.0, shared
 * so the message patch API may replace it) used where CardKit is refused, the durable
 * reference to either, and the card's sequence numbers.
 *
 * Feishu refuses a card operation whose `sequence` is not greater than the card's last
 * one, also when the final update comes from another process after a restart. So a
 * sequence is the milliseconds since the card was created (its creation time travels in
 * the reference), never less than the last one this process used plus one: any process
 * that finishes a card counts on from where the clock says the card is. A card entity
 * lives 14 days, well inside the int32 a sequence must fit.
 */

/** The element of the card that holds the answer (or the status line). */
export const ANSWER_ELEMENT_ID = "answer";
const MAX_SEQUENCE = 2_147_483_647;
/** How many cards' last sequences a process remembers (the latest ones: a retried final update finds its card's). */
const REMEMBERED_CARDS = 500;
/** How long the chat list's preview of a finished card may be. */
const SUMMARY_CHARS = 50;

/** A preview that exists on Feishu: a CardKit card sent as a message, or a card message patched in place. */
export type PreviewRef =
  | { kind: "card"; cardId: string; messageId: string; createdAt: number }
  | { kind: "patch"; messageId: string };

export function encodeRef(ref: PreviewRef): string {
  return ref.kind === "card"
    ? JSON.stringify({ k: "card", c: ref.cardId, m: ref.messageId, t: ref.createdAt })
    : JSON.stringify({ k: "patch", m: ref.messageId });
}

/** The reference a surface made; undefined for anything else (a ref from another platform, a damaged row). */
export function decodeRef(text: string): PreviewRef | undefined {
  let value: { k?: unknown; c?: unknown; m?: unknown; t?: unknown };
  try {
    value = JSON.parse(text) as typeof value;
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || typeof value.m !== "string" || !value.m) return undefined;
  if (value.k === "patch") return { kind: "patch", messageId: value.m };
  if (value.k === "card" && typeof value.c === "string" && value.c && typeof value.t === "number")
    return { kind: "card", cardId: value.c, messageId: value.m, createdAt: value.t };
  return undefined;
}

export type Sequencer = {
  /** The next sequence for the card; `aheadMs` jumps ahead (another process's clock ran ahead of ours). */
  next(card: { cardId: string; createdAt: number }, aheadMs?: number): number;
};

export function createSequencer(now: () => number): Sequencer {
  const last = new Map<string, number>();
  return {
    next(card, aheadMs = 0) {
      const fromClock = Math.floor(now() - card.createdAt) + 1 + aheadMs;
      const sequence = Math.min(MAX_SEQUENCE, Math.max((last.get(card.cardId) ?? 0) + 1, fromClock));
      last.delete(card.cardId);
      last.set(card.cardId, sequence);
      if (last.size > REMEMBERED_CARDS) last.delete(last.keys().next().value as string);
      return sequence;
    },
  };
}

/** A card shows no empty element: the text, or an ellipsis while there is none. */
export function elementText(text: string): string {
  return text.trim() ? text : "…";
}

/** The CardKit card entity, streaming, showing `text`. */
export function streamingCard(text: string): string {
  return JSON.stringify({
    schema: "2.0",
    config: {
      streaming_mode: true,
      update_multi: true,
      // "fast": a new update first shows whatever the typewriter had not printed yet, so it never lags behind.
      streaming_config: {
        print_frequency_ms: { default: 50 },
        print_step: { default: 2 },
        print_strategy: "fast",
      },
    },
    body: { elements: [answerElementObject(text)] },
  });
}

/** The answer element whole, for the component update (which works with streaming mode closed). */
export function answerElement(text: string): string {
  return JSON.stringify(answerElementObject(text));
}

function answerElementObject(text: string) {
  return { tag: "markdown", element_id: ANSWER_ELEMENT_ID, content: elementText(text) };
}

/** Settings that close streaming mode, with the chat list's preview showing the final text. */
export function closedSettings(text: string): string {
  const plain = text.replace(/\s+/g, " ").trim();
  const summary = plain.length <= SUMMARY_CHARS ? plain : `${plain.slice(0, SUMMARY_CHARS - 1).trimEnd()}…`;
  return JSON.stringify({ config: { streaming_mode: false, ...(summary ? { summary: { content: summary } } : {}) } });
}

/** The content of the interactive message that shows a card entity. */
export function cardMessageContent(cardId: string): string {
  return JSON.stringify({ type: "card", data: { card_id: cardId } });
}

/** A plain shared card (JSON 1.0) showing `text`, for where CardKit is refused: sent, then patched. */
export function patchCard(text: string): string {
  return JSON.stringify({
    config: { update_multi: true, wide_screen_mode: true },
    elements: [{ tag: "markdown", content: elementText(text) }],
  });
}
