/**
 * What a chat platform adapter (Telegram, Feishu) does for the chat gateway: log in, turn
 * platform events into messages, and send one part of a reply. Everything that decides
 * (dedup, access, order, retries, the outbox) lives in the gateway, once for all platforms.
 */
import type { ChatType, IncomingMessage, OutgoingReply } from "./channel.js";

/** A message as the platform saw it; the gateway adds the agent and the operator flag. */
export type PlatformMessage = Omit<IncomingMessage, "agentId" | "isOperator">;

export type InboundEvent = {
  /** Ids the platform may re-deliver this event under (update id; Feishu event_id and message_id). */
  dedupKeys: string[];
  message: PlatformMessage;
};

export type BotIdentity = {
  /** Stable id of the bot on its platform (Telegram bot id, Feishu app id). */
  id: string;
  /** How people know it: `@laoding_bot`, or the Feishu app's name. */
  displayName: string;
};

export type ChatPlatform = {
  readonly channel: "telegram" | "feishu";
  /**
   * push: the platform calls us (webhooks): every replica serves. pull: we hold a
   * connection (long polling, Feishu's long connection): one replica at a time, by lease.
   */
  readonly receiving: "push" | "pull";
  /** Checks the credentials against the platform; throws ChannelLoginError saying what to check. */
  login(): Promise<BotIdentity>;
  /**
   * Starts receiving. `onEvent` only takes the event in (stores it) and never rejects; the
   * platform acknowledges the event once its promise resolves, never before.
   * `onFailure` hears of receiving that stopped on its own after start-up (long polling
   * given up, the long connection lost for good): the gateway hands the connection's
   * lease back so it is taken up again, here or by another replica.
   */
  start(onEvent: (event: InboundEvent) => Promise<void>, onFailure?: (error: Error) => void): Promise<void>;
  /** Stops receiving; events already handed over are the gateway's. Idempotent. */
  stop(): Promise<void>;
  /** Splits an answer into parts the platform accepts, at paragraph or line boundaries. */
  split(text: string): string[];
  /** Sends one part; throws DeliveryError (retryable or not). `idempotencyKey` is stable across retries and restarts. */
  send(part: OutgoingReply, idempotencyKey: string): Promise<{ messageId?: string }>;
  /** Shows "typing" in the chat (lasts a few seconds); best effort. */
  typing?(chatId: string, threadId?: string): Promise<void>;
  /** A live preview for one turn (STREAM_REPLIES); absent where the platform cannot stream. */
  openPreview?(target: PreviewTarget): PreviewSurface;
  /** Edits a preview a stopped run left behind to say `note` (its answer follows as a new message); best effort, throws DeliveryError. */
  interruptPreview?(ref: string, note: string): Promise<void>;
};

/** Where a streamed answer is shown while the turn runs. */
export type PreviewTarget = {
  chatId: string;
  chatType: ChatType;
  /** The user's message (the platform's id), as for the final reply. */
  replyTo?: string;
  threadId?: string;
};

/**
 * One turn's live preview on a platform: a Telegram draft or a message edited in place, a
 * Feishu streaming card. The gateway decides when to show (reply-stream.ts throttles);
 * the surface only shows. It never delivers the final answer: the outbox does, replacing
 * the preview through `OutgoingReply.editRef`.
 */
export type PreviewSurface = {
  /**
   * Shows `text` in place of what was shown before: the answer so far (Markdown as the model
   * writes it) or a short status line (`kind: "status"`; a draft may show the platform's own
   * placeholder instead). Throws DeliveryError (`retryAfterMs` on 429); the stream slows
   * down and goes on, the final answer is never lost.
   */
  show(text: string, kind: "answer" | "status"): Promise<void>;
  /**
   * A durable reference to the platform message showing the preview, once one exists
   * (edit mode, a card); undefined for an ephemeral draft. The gateway stores it as soon as
   * it appears, so a restart can mark an abandoned preview, and hands it to the outbox
   * with the final answer's first part.
   */
  readonly ref: string | undefined;
  /** Re-show at least this often while the turn runs, even without new text (drafts expire); undefined: never. */
  readonly keepAliveMs: number | undefined;
  /** The first preview waits for this many characters of answer (a message edited in place should not flicker for a short answer); 0: at once. */
  readonly minFirstChars: number;
};

/** A send that failed. `retryable`: try again later (after `retryAfterMs` when the platform said). */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A bot that cannot log in: the platform's words plus what to check. Stops start-up. */
export class ChannelLoginError extends Error {
  override readonly name = "ChannelLoginError";
  constructor(
    message: string,
    readonly hint: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
