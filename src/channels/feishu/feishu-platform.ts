/**
 * Feishu / Lark through `@larksuiteoapi/node-sdk`: events over the long connection
 * (WSClient, no public URL needed) by default, or a webhook (EventDispatcher: body
 * decrypted and signature checked with the encrypt key, verification token compared
 * here because the SDK does not, a request stamped more than 5 minutes off refused as
 * a replay). The handler only takes the event in, so the platform gets its
 * acknowledgement at once. Replies go through the reply API (in the thread for topic
 * groups) as `post` with Markdown, with the outbox row's uuid so a resend after a
 * restart is not shown twice; a streamed answer's first part closes the turn's
 * streaming card instead (feishu-preview.ts).
 */
import * as lark from "@larksuiteoapi/node-sdk";
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
import { describeError as describe, sendMessage } from "./feishu-api.js";
import { feishuEventToInbound } from "./feishu-event.js";
import { createFeishuPreviews } from "./feishu-preview.js";
import { staleTimestamp } from "./webhook-timestamp.js";

/** Feishu accepts far longer messages, but a wall of text reads badly in a chat. */
export const FEISHU_MAX_MESSAGE_CHARS = 4000;
const CONNECT_TIMEOUT_MS = 30_000;

export type FeishuPlatformOptions = {
  appId: string;
  appSecret: string;
  /** Which variables hold the credentials, for the words of a login error. */
  credentialVariables: string;
  domain: string;
  webhook?: { host: string; port: number; path: string; encryptKey?: string; verificationToken?: string };
  logger: Logger;
  now?: () => number;
  fetch?: typeof fetch;
};

export function createFeishuPlatform(options: FeishuPlatformOptions): ChatPlatform {
  const log = options.logger.child({ channel: "feishu" });
  // Error text from here reaches the console, the outbox table and the chat, and the SDK's
  // errors carry the request (app_secret in the token call, the tenant token as Bearer).
  const { redact } = createRedactor([
    options.appSecret,
    ...(options.webhook?.encryptKey ? [options.webhook.encryptKey] : []),
    ...(options.webhook?.verificationToken ? [options.webhook.verificationToken] : []),
  ]);
  const loginError = (message: string, hint: string, cause?: unknown) =>
    new ChannelLoginError(redact(message), redact(hint), cause === undefined ? {} : { cause });
  const sdkLogger = larkLogger(log);
  const client = new lark.Client({
    appId: options.appId,
    appSecret: options.appSecret,
    domain: options.domain,
    cache: new lark.DefaultCache(),
    logger: sdkLogger,
    loggerLevel: lark.LoggerLevel.warn,
  });
  const now = options.now ?? Date.now;
  let identity: (BotIdentity & { openId: string }) | undefined;
  let server: WebhookServer | undefined;
  let wsClient: lark.WSClient | undefined;
  const split = (text: string) => splitText(text, (part) => part.length <= FEISHU_MAX_MESSAGE_CHARS);
  const previews = createFeishuPreviews({
    client,
    redact,
    log,
    now,
    // A long answer's preview shows its first part, as the final first part will be; the rest follows as new messages.
    previewText: (text) => {
      const parts = split(text);
      return parts.length > 1 ? `${parts[0]}\n\n…` : text;
    },
  });

  async function login(): Promise<BotIdentity & { openId: string }> {
    const doFetch = options.fetch ?? fetch;
    let token: { code?: number; msg?: string };
    try {
      const response = await doFetch(`${options.domain}/open-apis/auth/v3/tenant_access_token/internal`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ app_id: options.appId, app_secret: options.appSecret }),
      });
      token = (await response.json()) as { code?: number; msg?: string };
    } catch (error) {
      throw loginError(
        `cannot reach Feishu at ${options.domain}: ${describe(error)}`,
        "Check the network (and a proxy), and FEISHU_DOMAIN (https://open.feishu.cn, or https://open.larksuite.com for Lark)",
        error,
      );
    }
    if (token.code !== 0) {
      throw loginError(
        `Feishu refused the app credentials: ${token.msg ?? "no message"} (code ${token.code ?? "?"})`,
        `Check ${options.credentialVariables} against the app's Credentials & Basic Info page`,
      );
    }
    const info = (await client
      .request({ method: "GET", url: "/open-apis/bot/v3/info" })
      .catch((error: unknown) => ({ code: -1, msg: describe(error) }))) as {
      code?: number;
      msg?: string;
      bot?: { open_id?: string; app_name?: string };
    };
    if (info.code !== 0 || !info.bot?.open_id) {
      throw loginError(
        `Feishu did not give the bot's identity: ${info.msg ?? "no bot"} (code ${info.code ?? "?"})`,
        "Enable the app's Bot capability and publish a version of the app",
      );
    }
    return { id: options.appId, displayName: info.bot.app_name ?? options.appId, openId: info.bot.open_id };
  }

  return {
    channel: "feishu",
    receiving: options.webhook ? "push" : "pull",
    async login() {
      identity = await login();
      return identity;
    },
    async start(onEvent: (event: InboundEvent) => Promise<void>, onFailure?: (error: Error) => void) {
      identity ??= await login();
      const bot = { appId: options.appId, openId: identity.openId };
      const webhook = options.webhook;
      const dispatcher = new lark.EventDispatcher({
        ...(webhook?.encryptKey ? { encryptKey: webhook.encryptKey } : {}),
        logger: sdkLogger,
        loggerLevel: lark.LoggerLevel.warn,
      }).register({
        // The SDK answers the event (the webhook's response, the long connection's ack frame) once this resolves: after the gateway stored it.
        "im.message.receive_v1": async (data: unknown) => {
          if (webhook?.verificationToken && (data as { token?: unknown }).token !== webhook.verificationToken) {
            log.warn("webhook event with a wrong verification token dropped (check FEISHU_VERIFICATION_TOKEN)");
            return;
          }
          const outcome = feishuEventToInbound(data, bot, now());
          if ("dropped" in outcome) log.debug({ reason: outcome.dropped }, "Feishu event dropped");
          else await onEvent(outcome.event);
        },
      });
      if (webhook) {
        const callback = lark.adaptDefault(webhook.path, dispatcher, { autoChallenge: true });
        server = await startWebhookServer({
          host: webhook.host,
          port: webhook.port,
          onError: (error) => log.error({ err: error }, "webhook request failed"),
          handle: async (request, response) => {
            if (request.method !== "POST" || request.url !== webhook.path) return false;
            const stale = staleTimestamp(request.headers["x-lark-request-timestamp"], now());
            if (stale) {
              log.warn(
                { reason: stale, from: request.socket.remoteAddress },
                "Feishu webhook request refused: a replay, or this host's clock is off",
              );
              response.writeHead(401, { "content-type": "text/plain" }).end(stale);
              return true;
            }
            await callback(request, response);
            return true;
          },
        });
        log.info(
          { listen: `${webhook.host}:${server.port}`, path: webhook.path },
          "receiving Feishu events by webhook",
        );
        return;
      }
      if (!/^cli_[0-9a-fA-F]{16}$/.test(options.appId)) {
        throw loginError(
          `Feishu app id ${JSON.stringify(options.appId)} does not look like cli_ followed by 16 hex digits; the long connection needs it`,
          `Check ${options.credentialVariables}`,
        );
      }
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          log.warn({ timeoutMs: CONNECT_TIMEOUT_MS }, "the Feishu long connection is not up yet; it keeps trying");
          resolve();
        }, CONNECT_TIMEOUT_MS);
        wsClient = new lark.WSClient({
          appId: options.appId,
          appSecret: options.appSecret,
          domain: options.domain,
          logger: sdkLogger,
          loggerLevel: lark.LoggerLevel.warn,
          onReady: () => {
            clearTimeout(timer);
            log.info("receiving Feishu events over the long connection");
            resolve();
          },
          onError: (error: Error) => {
            clearTimeout(timer);
            // After start-up too (the SDK gave up reconnecting): say so, loudly, and hand the connection's lease back.
            log.error(
              { err: error },
              "the Feishu long connection failed; it is opened again by whichever replica takes its lease",
            );
            onFailure?.(error);
            reject(
              loginError(
                `Feishu long connection failed: ${error.message}`,
                'Enable "Receive events through persistent connection" in the app\'s Events and Callbacks page and subscribe im.message.receive_v1',
              ),
            );
          },
        });
        void wsClient.start({ eventDispatcher: dispatcher });
      });
    },
    async stop() {
      wsClient?.close({ force: true });
      wsClient = undefined;
      await server?.close();
    },
    split,
    async send(part, idempotencyKey) {
      if (part.editRef) {
        const finished = await previews.finish(part.editRef, part.text);
        if (finished !== "gone") return { messageId: finished.messageId };
      }
      const messageId = await sendMessage(client.im.v1.message, redact, part, {
        msgType: "post",
        content: JSON.stringify({ zh_cn: { content: [[{ tag: "md", text: part.text }]] } }),
        uuid: idempotencyKey,
      });
      return messageId ? { messageId } : {};
    },
    openPreview: (target) => previews.open(target),
    async interruptPreview(ref, note) {
      if ((await previews.finish(ref, note)) === "gone")
        throw new DeliveryError("the interrupted Feishu preview can no longer be edited", false);
    },
  };
}

/** The SDK logs through this (never to the console): its lines go to our JSON log. */
function larkLogger(log: Logger) {
  const line =
    (level: "error" | "warn" | "info" | "debug" | "trace") =>
    (...parts: unknown[]) =>
      log[level](
        { component: "lark-sdk" },
        parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" "),
      );
  return { error: line("error"), warn: line("warn"), info: line("info"), debug: line("debug"), trace: line("trace") };
}
