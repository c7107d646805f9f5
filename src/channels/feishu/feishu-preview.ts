/**
 * Streamed answers on Feishu (STREAM_REPLIES): each turn's preview is a CardKit card in
 * streaming mode, sent as an interactive message replying to the user (in the thread for
 * topic groups), whose Markdown element Feishu types out as each show replaces its
 * content. The outbox's final first part (and a stopped run's note) replaces the
 * element's content once more and closes streaming mode, so the chat keeps the final,
 * rendered answer in the same message. Where the app may not use CardKit (the scope not
 * granted, CardKit absent), a plain shared card is sent and replaced through the message
 * patch API instead. A card that can no longer be edited (deleted, expired, recalled) is
 * reported as gone: the answer then goes out as a new message.
 */
import { randomBytes } from "node:crypto";
import type * as lark from "@larksuiteoapi/node-sdk";
import type { Logger } from "pino";
import { DeliveryError, type PreviewSurface, type PreviewTarget } from "../chat-platform.js";
import { callFeishu, dataOf, sendMessage, type FeishuOutcome } from "./feishu-api.js";
import {
  ANSWER_ELEMENT_ID,
  answerElement,
  cardMessageContent,
  closedSettings,
  createSequencer,
  decodeRef,
  elementText,
  encodeRef,
  patchCard,
  streamingCard,
  type PreviewRef,
} from "./feishu-cards.js";

/** The app lacks the CardKit scope (cardkit:card:write): as the app, or for the user. */
const CARDKIT_REFUSED_CODES = new Set([99991672, 99991679]);
/** Streaming mode is closed (300309), or timed out while we wrote (200850; Feishu closes it after 10 minutes). */
const STREAMING_CLOSED_CODES = new Set([300309, 200850]);
/** The card's sequence did not increase. */
const SEQUENCE_REFUSED_CODE = 300317;
/** A sequence refused though ours counts from the card's creation: another process's clock ran ahead; jump this far. */
const CLOCK_SKEW_MS = 60_000;

type CardRef = Extract<PreviewRef, { kind: "card" }>;

export type FeishuPreviewsOptions = {
  client: lark.Client;
  redact: (text: string) => string;
  log: Logger;
  now: () => number;
  /** What a preview of `text` shows: the first part of a long answer (what part 1 will finally be). */
  previewText: (text: string) => string;
};

export type FeishuPreviews = {
  open(target: PreviewTarget): PreviewSurface;
  /** Shows `text` for good in the preview `ref` and closes it; "gone" when it can no longer be edited. */
  finish(ref: string, text: string): Promise<{ messageId: string } | "gone">;
};

export function createFeishuPreviews(options: FeishuPreviewsOptions): FeishuPreviews {
  const { client, redact, log, now } = options;
  const sequencer = createSequencer(now);
  let cardkitRefused = false;

  /** Runs a card operation with the card's next sequence; once more further ahead if Feishu refuses the sequence. */
  async function withSequence(
    card: { cardId: string; createdAt: number },
    operation: (sequence: number) => Promise<FeishuOutcome<unknown>>,
  ) {
    const outcome = await operation(sequencer.next(card));
    if (outcome.ok || outcome.code !== SEQUENCE_REFUSED_CODE) return outcome;
    return operation(sequencer.next(card, CLOCK_SKEW_MS));
  }

  const setContent = (card: { cardId: string }, text: string) => (sequence: number) =>
    callFeishu(
      () =>
        client.cardkit.v1.cardElement.content({
          path: { card_id: card.cardId, element_id: ANSWER_ELEMENT_ID },
          data: { content: elementText(text), sequence },
        }),
      "the card update",
      redact,
    );
  const replaceElement = (card: { cardId: string }, text: string) => (sequence: number) =>
    callFeishu(
      () =>
        client.cardkit.v1.cardElement.update({
          path: { card_id: card.cardId, element_id: ANSWER_ELEMENT_ID },
          data: { element: answerElement(text), sequence },
        }),
      "the card update",
      redact,
    );
  const patchMessage = (messageId: string, text: string) =>
    callFeishu(
      () => client.im.v1.message.patch({ path: { message_id: messageId }, data: { content: patchCard(text) } }),
      "the message update",
      redact,
    );

  /** Replaces the card's text: typed out while streaming, the whole element once Feishu closed streaming. */
  async function updateCard(card: CardRef, text: string, streaming: { closed: boolean }) {
    if (!streaming.closed) {
      const outcome = await withSequence(card, setContent(card, text));
      if (outcome.ok || !STREAMING_CLOSED_CODES.has(outcome.code ?? 0)) return outcome;
      streaming.closed = true;
    }
    return withSequence(card, replaceElement(card, text));
  }

  /** A new CardKit card showing `text`; "refused" where the app may not use CardKit. */
  async function createCard(text: string): Promise<{ cardId: string; createdAt: number } | "refused"> {
    const createdAt = now();
    const outcome = await callFeishu(
      () => client.cardkit.v1.card.create({ data: { type: "card_json", data: streamingCard(text) } }),
      "the streaming card",
      redact,
    );
    if (!outcome.ok && (CARDKIT_REFUSED_CODES.has(outcome.code ?? 0) || outcome.status === 404)) {
      cardkitRefused = true;
      log.warn(
        { err: outcome.error },
        "Feishu refused CardKit: streamed answers are shown in cards replaced by the message patch API (grant the app cardkit:card:write for a typing card)",
      );
      return "refused";
    }
    const cardId = dataOf(outcome)?.card_id;
    if (!cardId) throw new DeliveryError("Feishu created the streaming card without a card id", true);
    return { cardId, createdAt };
  }

  function open(target: PreviewTarget): PreviewSurface {
    const uuid = `laoding-preview-${randomBytes(12).toString("hex")}`;
    let ref: PreviewRef | undefined;
    /** A card made whose message did not go out yet: the next show sends it (same uuid: never twice). */
    let unsent: { cardId: string; createdAt: number } | undefined;
    const streaming = { closed: false };

    async function firstShow(text: string): Promise<PreviewRef> {
      if (!cardkitRefused) {
        if (unsent) dataOf(await withSequence(unsent, setContent(unsent, text)));
        else {
          const made = await createCard(text);
          if (made !== "refused") unsent = made;
        }
        if (unsent) {
          const card = unsent;
          const messageId = await sendMessage(client.im.v1.message, redact, target, {
            msgType: "interactive",
            content: cardMessageContent(card.cardId),
            uuid,
          });
          if (!messageId) throw new DeliveryError("Feishu sent the streaming card without a message id", true);
          unsent = undefined;
          return { kind: "card", ...card, messageId };
        }
      }
      const messageId = await sendMessage(client.im.v1.message, redact, target, {
        msgType: "interactive",
        content: patchCard(text),
        uuid,
      });
      if (!messageId) throw new DeliveryError("Feishu sent the preview card without a message id", true);
      return { kind: "patch", messageId };
    }

    return {
      get ref() {
        return ref && encodeRef(ref);
      },
      keepAliveMs: undefined,
      // A card for every answer, however short: it closes with the final text in the same message.
      minFirstChars: 1,
      async show(text) {
        const shown = options.previewText(text);
        if (!ref) ref = await firstShow(shown);
        else if (ref.kind === "card") dataOf(await updateCard(ref, shown, streaming));
        else dataOf(await patchMessage(ref.messageId, shown));
      },
    };
  }

  async function finish(refText: string, text: string): Promise<{ messageId: string } | "gone"> {
    const ref = decodeRef(refText);
    if (!ref) return "gone";
    if (ref.kind === "patch") {
      const outcome = await patchMessage(ref.messageId, text);
      if (!outcome.ok) return goneUnlessRetryable(outcome);
      return { messageId: ref.messageId };
    }
    // After a lost acknowledgement of the close, streaming is closed already: updateCard replaces the element.
    const updated = await updateCard(ref, text, { closed: false });
    if (!updated.ok) return goneUnlessRetryable(updated);
    const closed = await withSequence(ref, (sequence) =>
      callFeishu(
        () =>
          client.cardkit.v1.card.settings({
            path: { card_id: ref.cardId },
            data: { settings: closedSettings(text), sequence },
          }),
        "the card update",
        redact,
      ),
    );
    if (!closed.ok) {
      if (closed.error.retryable) throw closed.error;
      log.warn({ err: closed.error }, "a finished Feishu card stays in streaming mode; it shows the final text");
    }
    return { messageId: ref.messageId };
  }

  function goneUnlessRetryable(outcome: Extract<FeishuOutcome<unknown>, { ok: false }>): "gone" {
    if (outcome.error.retryable) throw outcome.error;
    log.info({ err: outcome.error }, "a Feishu preview can no longer be edited; its text goes out as a new message");
    return "gone";
  }

  return { open, finish };
}
