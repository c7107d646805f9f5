/**
 * The CardKit part of the fake Feishu open platform: card entities (JSON 2.0) created,
 * their elements' content replaced (the streaming "typewriter" API, only while streaming
 * mode is on), whole elements replaced, settings changed (streaming mode closed). Like
 * Feishu, every operation on a card carries a `sequence` that must be greater than the
 * card's last accepted one (else 300317), content updates are refused once streaming mode
 * is closed (300309), and a deleted or expired card refuses everything (200740, 200750).
 * Every operation is recorded with its sequence, time and outcome.
 */

export type FeishuCardUpdate = {
  cardId: string;
  kind: "content" | "element" | "settings";
  sequence: number;
  /** The element's new text (content and element updates). */
  text?: string;
  /** Streaming mode as the settings set it. */
  streamingMode?: boolean;
  at: number;
  /** Feishu's code when it refused the update. */
  refused?: number;
};

export type FakeCard = {
  cardId: string;
  streamingMode: boolean;
  lastSequence: number;
  /** Element id → Markdown text, in the card's order. */
  elements: Map<string, string>;
  summary?: string;
  broken?: "deleted" | "expired";
  createdAt: number;
};

type Answer = { status: number; payload: Record<string, unknown> };

const ok = (data: Record<string, unknown> = {}): Answer => ({
  status: 200,
  payload: { code: 0, msg: "success", data },
});
const refuse = (code: number, msg: string): Answer => ({ status: 400, payload: { code, msg } });

export type FakeCardKit = {
  cards: Map<string, FakeCard>;
  updates: FeishuCardUpdate[];
  create(body: Record<string, unknown>): Answer;
  content(cardId: string, elementId: string, body: Record<string, unknown>): Answer;
  element(cardId: string, elementId: string, body: Record<string, unknown>): Answer;
  settings(cardId: string, body: Record<string, unknown>): Answer;
  /** What the card shows: its elements' text, one per line. */
  textOf(cardId: string): string;
};

export function createFakeCardKit(onChange: () => void): FakeCardKit {
  const cards = new Map<string, FakeCard>();
  const updates: FeishuCardUpdate[] = [];
  let counter = 0;

  /** The checks every operation on an existing card goes through; records it. */
  function operate(
    cardId: string,
    update: Omit<FeishuCardUpdate, "cardId" | "at" | "refused">,
    apply: (card: FakeCard) => Answer | undefined,
  ): Answer {
    const card = cards.get(cardId);
    const answer = ((): Answer => {
      if (!card || card.broken === "deleted") return refuse(200740, "The card entity does not exist");
      if (card.broken === "expired") return refuse(200750, "The card entity has expired");
      if (!Number.isInteger(update.sequence) || update.sequence < 1 || update.sequence > 2_147_483_647)
        return refuse(10002, "invalid request parameter: sequence");
      if (update.sequence <= card.lastSequence)
        return refuse(300317, "The sequence number for operating on the card did not increment consecutively");
      const refused = apply(card);
      if (refused) return refused;
      card.lastSequence = update.sequence;
      return ok();
    })();
    const code = answer.payload.code as number;
    updates.push({ cardId, ...update, at: Date.now(), ...(code !== 0 ? { refused: code } : {}) });
    onChange();
    return answer;
  }

  return {
    cards,
    updates,
    create(body) {
      if (body.type !== "card_json" || typeof body.data !== "string")
        return refuse(10002, "invalid request parameter: type");
      const card = JSON.parse(body.data) as {
        schema?: string;
        config?: { streaming_mode?: boolean; update_multi?: boolean };
        body?: { elements?: { tag?: string; element_id?: string; content?: string }[] };
      };
      if (card.schema !== "2.0") return refuse(200220, "Failed to generate card content: schema 2.0 only");
      if (card.config?.update_multi === false) return refuse(300302, "update_multi property is false");
      counter += 1;
      const cardId = `7${String(counter).padStart(18, "0")}`;
      const elements = new Map<string, string>();
      (card.body?.elements ?? []).forEach((element, index) =>
        elements.set(element.element_id ?? `#${index}`, element.content ?? ""),
      );
      cards.set(cardId, {
        cardId,
        streamingMode: card.config?.streaming_mode === true,
        lastSequence: 0,
        elements,
        createdAt: Date.now(),
      });
      onChange();
      return ok({ card_id: cardId });
    },
    content(cardId, elementId, body) {
      const text = stringOf(body.content, "");
      return operate(cardId, { kind: "content", sequence: Number(body.sequence), text }, (card) => {
        if (!card.streamingMode) return refuse(300309, "streaming mode is closed");
        if (!card.elements.has(elementId)) return refuse(300301, "The element does not exist");
        card.elements.set(elementId, text);
        return undefined;
      });
    },
    element(cardId, elementId, body) {
      const element = JSON.parse(stringOf(body.element, "{}")) as { content?: string; element_id?: string };
      const text = element.content ?? "";
      return operate(cardId, { kind: "element", sequence: Number(body.sequence), text }, (card) => {
        if (!card.elements.has(elementId)) return refuse(300301, "The element does not exist");
        card.elements.set(elementId, text);
        return undefined;
      });
    },
    settings(cardId, body) {
      const settings = JSON.parse(stringOf(body.settings, "{}")) as {
        config?: { streaming_mode?: boolean; summary?: { content?: string } };
      };
      const streamingMode = settings.config?.streaming_mode;
      return operate(
        cardId,
        {
          kind: "settings",
          sequence: Number(body.sequence),
          ...(streamingMode !== undefined ? { streamingMode } : {}),
        },
        (card) => {
          if (streamingMode !== undefined) card.streamingMode = streamingMode;
          if (settings.config?.summary?.content !== undefined) card.summary = settings.config.summary.content;
          return undefined;
        },
      );
    },
    textOf(cardId) {
      return [...(cards.get(cardId)?.elements.values() ?? [])].join("\n");
    },
  };
}

const stringOf = (value: unknown, otherwise: string) => (typeof value === "string" ? value : otherwise);
