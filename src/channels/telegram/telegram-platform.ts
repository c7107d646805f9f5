/**
 * Telegram through grammY: long polling by default, a webhook when a URL is configured
 * (secret token checked; the handler only takes the update in, so Telegram never waits
 * for a turn). Replies go out as HTML converted from the model's Markdown, resent as
 * plain text when Telegram rejects the entities, in parts under 4096 characters. A streamed
 * turn's preview (telegram-preview.ts) is a draft in private chats, else a message that the
 * reply's first part edits into the answer.
 */
import { Bot, GrammyError, HttpError, webhookCallback } from "grammy";
import type { Logger } from "pino";
import { createRedactor } from "../../log/redact.js";
import {
  ChannelLoginError,
  DeliveryError,
  type BotIdentity,
  type ChatPlatform,
  type InboundEvent,
} from "../chat-platform.js";
import { splitText } from "../split-text.js";
import { startWebhookServer, type WebhookServer } from "../webhook-server.js";
import { markdownToTelegramHtml } from "./markdown-to-html.js";
import {
  cannotEdit,
  createTelegramPreview,
  isNotModified,
  parseEditRef,
  type DraftSupport,
} from "./telegram-preview.js";
import { telegramUpdateToEvent } from "./telegram-update.js";

export const TELEGRAM_MAX_MESSAGE_CHARS = 4096;
const STOP_TIMEOUT_MS = 5_000;

export type TelegramPlatformOptions = {
  token: string;
  /** Which variable holds the token, for the words of a login error. */
  tokenVariable: string;
  apiRoot: string;
  /** Commands shown in Telegram's menu (setMyCommands). */
  commands: { command: string; description: string }[];
  webhook?: { url: string; secretToken: string; host: string; port: number };
  logger: Logger;
};

export function createTelegramPlatform(options: TelegramPlatformOptions): ChatPlatform {
  const bot = new Bot(options.token, { client: { apiRoot: options.apiRoot } });
  const log = options.logger.child({ channel: "telegram" });
  // grammY's network errors name the request URL, and the token is in its path: error
  // text from here reaches the console, the outbox table and the chat, so it is redacted.
  const { redact } = createRedactor([options.token, ...(options.webhook ? [options.webhook.secretToken] : [])]);
  let server: WebhookServer | undefined;
  let polling: Promise<void> | undefined;
  let identity: BotIdentity | undefined;
  let deliverEvent: ((event: InboundEvent) => Promise<void>) | undefined;
  // Polling: the first update handed over but not stored (polling stopped while the store refused
  // it). grammY's stop() and next getUpdates confirm every update it tried; this one and those
  // after it must be handed out again, so grammY's offset is put back before them.
  let unstored: number | undefined;
  let pollingStopped = new AbortController();
  const rewind = () => {
    if (unstored !== undefined) (bot as unknown as { lastTriedUpdateId: number }).lastTriedUpdateId = unstored - 1;
  };
  // Learnt from the first refused draft: this bot's previews are messages edited in place from then on.
  const drafts: DraftSupport = { refused: false };

  /** Sends (or edits to) the rendered HTML; plain text when Telegram rejects the entities. */
  async function rendered<T>(part: { chatId: string }, html: () => Promise<T>, plain: () => Promise<T>): Promise<T> {
    try {
      return await html();
    } catch (error) {
      if (
        !(
          error instanceof GrammyError &&
          error.error_code === 400 &&
          /can't parse entities|unsupported start tag|can't find end tag/i.test(error.description)
        )
      )
        throw error;
      log.info(
        { chatId: part.chatId, reason: error.description },
        "Telegram rejected the formatting; sending plain text",
      );
      return plain();
    }
  }

  /**
   * Edits a reply's preview into its first part. "Not modified" is delivered (it already shows
   * this: a retry after a lost acknowledgement); undefined when the preview can no longer be
   * edited, so a new message goes out instead.
   */
  async function editInto(ref: string, text: string, chatId: string): Promise<{ messageId: string } | undefined> {
    const message = parseEditRef(ref);
    if (!message) return undefined;
    const done = { messageId: String(message.messageId) };
    try {
      await rendered(
        { chatId },
        () =>
          bot.api.editMessageText(message.chatId, message.messageId, markdownToTelegramHtml(text), {
            parse_mode: "HTML",
          }),
        () => bot.api.editMessageText(message.chatId, message.messageId, text),
      );
      return done;
    } catch (error) {
      if (isNotModified(error)) return done;
      if (!cannotEdit(error)) throw error;
      log.info(
        { chatId, ref, reason: error instanceof GrammyError ? error.description : undefined },
        "the answer's preview can no longer be edited; sending the answer as a new message",
      );
      return undefined;
    }
  }

  return {
    channel: "telegram",
    receiving: options.webhook ? "push" : "pull",
    async login() {
      try {
        // Not bot.init(): it retries network errors for ever, and start-up must say what is wrong instead.
        bot.botInfo = await bot.api.getMe();
      } catch (error) {
        throw loginError(error, options, redact);
      }
      identity = { id: String(bot.botInfo.id), displayName: `@${bot.botInfo.username}` };
      return identity;
    },
    async start(onEvent: (event: InboundEvent) => Promise<void>, onFailure?: (error: Error) => void) {
      if (!identity) await this.login();
      // grammY confirms an update (the next getUpdates offset, or the webhook's answer) once this resolves: after the gateway stored it.
      const firstStart = deliverEvent === undefined;
      deliverEvent = onEvent;
      if (firstStart) {
        bot.on("message", async (context) => {
          const event = telegramUpdateToEvent(context.update, bot.botInfo);
          if (!event) return;
          // A webhook that fails is delivered again by Telegram. A polled update would be
          // confirmed by the next getUpdates: keep it (and the poll) until it is stored.
          if (options.webhook) {
            await (deliverEvent as (event: InboundEvent) => Promise<void>)(event);
            return;
          }
          const id = context.update.update_id;
          // Polling stopped with an earlier update of the batch not stored: this one comes again after it.
          if (unstored !== undefined)
            throw new Error(`update ${id} not taken in: update ${unstored} before it is not stored yet`);
          unstored = id;
          await untilStored(
            () => (deliverEvent as (event: InboundEvent) => Promise<void>)(event),
            pollingStopped.signal,
            () => bot.isRunning(),
            log,
          );
          unstored = undefined;
        });
        bot.catch((error) => log.error({ err: error.error }, "handling a Telegram update failed"));
      }
      try {
        await bot.api.setMyCommands(options.commands);
      } catch (error) {
        log.warn({ err: error }, "could not register the command menu (setMyCommands); commands still work");
      }
      if (options.webhook) {
        const { url, secretToken, host, port } = options.webhook;
        const path = new URL(url).pathname;
        // An update not stored within grammY's 10 s is answered 503 (never 200): Telegram sends it
        // again, and the gateway drops the copy if the first one was stored after all.
        const callback = webhookCallback(bot, "http", { secretToken, onTimeout: "throw" });
        server = await startWebhookServer({
          host,
          port,
          onError: (error) => log.error({ err: error }, "webhook request failed"),
          handle: async (request, response) => {
            if (request.method !== "POST" || new URL(request.url ?? "/", "http://x").pathname !== path) return false;
            await callback(request, response);
            return true;
          },
        });
        await bot.api.setWebhook(url, { secret_token: secretToken, allowed_updates: ["message"] });
        log.info({ url, listen: `${host}:${server.port}` }, "receiving Telegram updates by webhook");
        return;
      }
      pollingStopped = new AbortController();
      rewind();
      unstored = undefined;
      await new Promise<void>((resolve, reject) => {
        let started = false;
        polling = bot.start({
          allowed_updates: ["message"],
          onStart: () => {
            started = true;
            resolve();
          },
        });
        polling.catch((error: unknown) => {
          // Before the first poll this is a start-up failure.
          if (!started) return reject(loginError(error, options, redact));
          // Later polling has given up: another poller (a replica taking over, whose old leader's
          // last confirming call cut this poll off with 409), or a revoked token. The lease goes back
          // and polling starts again, here or on another replica.
          log.error(
            { err: error },
            "Telegram polling stopped; it is started again by whichever replica takes the poller's lease",
          );
          onFailure?.(error instanceof Error ? error : new Error(String(error)));
        });
      });
    },
    async stop() {
      if (server) await server.close();
      // grammY's stop confirms the last updates with one more call: an unreachable API must not hold up shutdown.
      const stopping = (async () => {
        if (bot.isRunning()) {
          pollingStopped.abort();
          rewind();
          await bot.stop();
        }
        await polling?.catch(() => undefined);
      })();
      await Promise.race([stopping, new Promise((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS).unref())]);
    },
    split: (text) =>
      splitText(
        text,
        (part) =>
          part.length <= TELEGRAM_MAX_MESSAGE_CHARS &&
          markdownToTelegramHtml(part).length <= TELEGRAM_MAX_MESSAGE_CHARS,
      ),
    async send(part) {
      try {
        if (part.editRef) {
          const edited = await editInto(part.editRef, part.text, part.chatId);
          if (edited) return edited;
        }
        const target = targeting(part.chatId, part.replyTo, part.threadId);
        const sent = await rendered(
          part,
          () => bot.api.sendMessage(part.chatId, markdownToTelegramHtml(part.text), { parse_mode: "HTML", ...target }),
          () => bot.api.sendMessage(part.chatId, part.text, target),
        );
        return { messageId: String(sent.message_id) };
      } catch (error) {
        throw deliveryError(error, redact);
      }
    },
    openPreview: (target) =>
      createTelegramPreview({
        api: bot.api,
        target,
        drafts,
        targeting: targeting(target.chatId, target.replyTo, target.threadId),
        toError: (error) => deliveryError(error, redact),
        log,
      }),
    async interruptPreview(ref, note) {
      const message = parseEditRef(ref);
      if (!message) return;
      try {
        await bot.api.editMessageText(message.chatId, message.messageId, note);
      } catch (error) {
        if (!isNotModified(error)) throw deliveryError(error, redact);
      }
    },
    async typing(chatId, threadId) {
      await bot.api.sendChatAction(chatId, "typing", threadId ? { message_thread_id: Number(threadId) } : {});
    },
  };
}

/** Where an answer (or its preview) goes: a reply quote in groups (private chats have positive ids: it only adds noise there), the topic. */
function targeting(chatId: string, replyTo: string | undefined, threadId: string | undefined) {
  return {
    ...(replyTo && chatId.startsWith("-")
      ? { reply_parameters: { message_id: Number(replyTo), allow_sending_without_reply: true } }
      : {}),
    ...(threadId ? { message_thread_id: Number(threadId) } : {}),
  };
}

function deliveryError(error: unknown, redact: (text: string) => string): DeliveryError {
  if (error instanceof GrammyError) {
    const retryAfterMs = error.parameters.retry_after !== undefined ? error.parameters.retry_after * 1000 : undefined;
    const retryable = error.error_code === 429 || error.error_code >= 500;
    return new DeliveryError(
      redact(`Telegram ${error.method}: ${error.error_code} ${error.description}`),
      retryable,
      retryAfterMs,
      { cause: error },
    );
  }
  if (error instanceof HttpError)
    return new DeliveryError(redact(`Telegram unreachable: ${error.message}`), true, undefined, { cause: error });
  return new DeliveryError(redact(error instanceof Error ? error.message : String(error)), false, undefined, {
    cause: error,
  });
}

function loginError(
  error: unknown,
  options: TelegramPlatformOptions,
  redact: (text: string) => string,
): ChannelLoginError {
  const failure = describeLoginFailure(error, options);
  return new ChannelLoginError(redact(failure.message), redact(failure.hint), { cause: error });
}

function describeLoginFailure(error: unknown, options: TelegramPlatformOptions): { message: string; hint: string } {
  if (error instanceof GrammyError) {
    const hint =
      error.error_code === 401 || error.error_code === 404
        ? `Check ${options.tokenVariable}: copy the token from @BotFather again (it looks like 123456789:AA...)`
        : error.error_code === 409
          ? "Another instance of this bot is receiving updates (or a webhook is set): stop it, or use one bot token per running bot"
          : `Check ${options.tokenVariable} and TELEGRAM_API_ROOT (${options.apiRoot})`;
    return { message: `Telegram refused to log in: ${error.error_code} ${error.description}`, hint };
  }
  if (error instanceof HttpError) {
    return {
      message: `cannot reach the Telegram Bot API at ${options.apiRoot}: ${describeCause(error)}`,
      hint: "Check the network (and a proxy), or TELEGRAM_API_ROOT for a self-hosted Bot API server",
    };
  }
  return {
    message: `Telegram login failed: ${error instanceof Error ? error.message : String(error)}`,
    hint: `Check ${options.tokenVariable} and TELEGRAM_API_ROOT`,
  };
}

function describeCause(error: HttpError): string {
  const cause = error.error as { cause?: { code?: string; message?: string }; message?: string } | undefined;
  return cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.message;
}

/** Tries to take a polled update in until it is stored, backing off to 30 s, while polling runs (a stop ends the wait at once). */
async function untilStored(
  store: () => Promise<void>,
  stopped: AbortSignal,
  running: () => boolean,
  log: { warn(obj: object, message: string): void },
): Promise<void> {
  for (let waitMs = 500; ; waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      return await store();
    } catch (error) {
      if (stopped.aborted || !running()) throw error;
      log.warn({ err: error, retryInMs: waitMs }, "could not store a polled update; polling waits until it can");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, waitMs);
        stopped.addEventListener("abort", done, { once: true });
        function done() {
          clearTimeout(timer);
          stopped.removeEventListener("abort", done);
          resolve();
        }
      });
      if (stopped.aborted) throw error;
    }
  }
}
