/**
 * Telegram's live preview of a turn (STREAM_REPLIES). Private chats get a draft
 * (sendMessageDraft: ephemeral, about 30 s, shown again every DRAFT_KEEP_ALIVE_MS; an empty
 * text is Telegram's own "Thinking…" placeholder while tools run); the final answer is a
 * new message from the outbox, which makes the draft go away. Where drafts are refused
 * (an older Bot API server, a chat that has none), the bot remembers it and previews, as in
 * groups, with one message edited in place: a plain sendMessage first, editMessageText
 * after; the outbox's first part edits that message into the rendered answer.
 */
import { randomInt } from "node:crypto";
import { GrammyError, type Api } from "grammy";
import type { Logger } from "pino";
import { DeliveryError, type PreviewSurface, type PreviewTarget } from "../chat-platform.js";

/** Drafts live about 30 s: shown again well before. */
export const DRAFT_KEEP_ALIVE_MS = 20_000;
/** A message edited in place starts once the answer has this many characters (a short answer does not flicker). */
export const EDIT_MIN_FIRST_CHARS = 24;
export const TELEGRAM_PREVIEW_MAX_CHARS = 4096;

/** What the platform remembers about its bot across turns. */
export type DraftSupport = { refused: boolean };

export type TelegramPreviewOptions = {
  api: Api;
  target: PreviewTarget;
  drafts: DraftSupport;
  /** reply_parameters / message_thread_id as the final answer's sendMessage has them. */
  targeting: Record<string, unknown>;
  toError: (error: unknown) => DeliveryError;
  log: Pick<Logger, "info">;
};

export function createTelegramPreview(options: TelegramPreviewOptions): PreviewSurface {
  const { api, target } = options;
  const chatId = target.chatId;
  let mode: "draft" | "edit" = target.chatType === "private" && !options.drafts.refused ? "draft" : "edit";
  // Per turn: changes to one draft id are animated, a new turn starts a new draft.
  const draftId = randomInt(1, 2 ** 31);
  let messageId: number | undefined;

  async function showDraft(text: string, kind: "answer" | "status"): Promise<void> {
    try {
      await api.sendMessageDraft(
        Number(chatId),
        draftId,
        kind === "status" ? "" : previewText(text),
        target.threadId ? { message_thread_id: Number(target.threadId) } : {},
      );
    } catch (error) {
      if (!refusesDrafts(error)) throw error;
      options.drafts.refused = true;
      mode = "edit";
      options.log.info(
        { chatId, reason: error.description },
        "Telegram refused a draft; this bot previews answers in a message edited in place from now on",
      );
      // Tried again after the interval under edit mode's rules (a status line and a short answer wait).
      throw new DeliveryError("Telegram refused a draft; the preview switches to a message edited in place", true);
    }
  }

  async function showInMessage(text: string): Promise<void> {
    const body = previewText(text);
    // Telegram refuses an empty message; there is nothing to show yet.
    if (body.trim() === "") return;
    if (messageId === undefined) {
      messageId = (await api.sendMessage(chatId, body, options.targeting)).message_id;
      return;
    }
    try {
      await api.editMessageText(chatId, messageId, body);
    } catch (error) {
      if (!isNotModified(error)) throw error;
    }
  }

  return {
    get ref() {
      return messageId === undefined ? undefined : editRefOf(chatId, messageId);
    },
    get keepAliveMs() {
      return mode === "draft" ? DRAFT_KEEP_ALIVE_MS : undefined;
    },
    get minFirstChars() {
      return mode === "draft" ? 0 : EDIT_MIN_FIRST_CHARS;
    },
    async show(text, kind) {
      try {
        if (mode === "draft") return await showDraft(text, kind);
        await showInMessage(text);
      } catch (error) {
        throw error instanceof DeliveryError ? error : options.toError(error);
      }
    },
  };
}

/** A preview is plain text of at most 4096 characters: a longer answer shows its beginning (its final parts come as they are split). */
export function previewText(text: string): string {
  if (text.length <= TELEGRAM_PREVIEW_MAX_CHARS) return text;
  let end = TELEGRAM_PREVIEW_MAX_CHARS - 1;
  // Never half of a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** A preview message's ref: `<chat id>:<message id>` (chat ids of groups are negative). */
export function editRefOf(chatId: string, messageId: number): string {
  return `${chatId}:${messageId}`;
}

export function parseEditRef(ref: string): { chatId: string; messageId: number } | undefined {
  const split = ref.lastIndexOf(":");
  const messageId = Number(ref.slice(split + 1));
  if (split <= 0 || !Number.isSafeInteger(messageId) || messageId <= 0) return undefined;
  return { chatId: ref.slice(0, split), messageId };
}

/** Any refusal of a draft but a 429 (slow down) or a server error: an older Bot API server, a chat without drafts. */
function refusesDrafts(error: unknown): error is GrammyError {
  return error instanceof GrammyError && error.error_code >= 400 && error.error_code < 500 && error.error_code !== 429;
}

/** The edit would leave the message as it is: it already shows this (a retry after a lost acknowledgement). */
export function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

/** The message can no longer be edited (deleted, too old, not the bot's): a new message instead. */
export function cannotEdit(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code === 400 &&
    /message to edit not found|message can't be edited|MESSAGE_ID_INVALID|message_id_invalid/i.test(error.description)
  );
}
