/**
 * A loopback fake of the Feishu open platform: tenant access token, bot info, message
 * create and reply (a `uuid` seen before returns the first message instead of a second
 * one, as Feishu does), scripted failures (rate limits), the long connection's endpoint
 * and WebSocket (feishu-long-connection.ts), and delivery of events to the bot's webhook,
 * plain or encrypted and signed with the encrypt key.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createLongConnectionHub, type LongConnectionHub } from "./feishu-long-connection.js";

export const FAKE_APP_ID = "cli_0123456789abcdef";
export const FAKE_APP_SECRET = "fake-app-secret";
export const FAKE_BOT_OPEN_ID = "ou_bot0000000000";

export type FeishuSentMessage = {
  kind: "create" | "reply";
  messageId: string;
  replyTo?: string;
  receiveId?: string;
  msgType: string;
  content: string;
  text: string;
  replyInThread?: boolean;
  uuid?: string;
  at: number;
};
export type FeishuFailure = { status: number; code: number; msg: string };

export type FakeFeishu = {
  domain: string;
  sent: FeishuSentMessage[];
  /** Calls of the send endpoints, including refused ones and uuid repeats. */
  sendAttempts: number;
  tokenRequests: number;
  longConnection: LongConnectionHub;
  failNext(failure: FeishuFailure, times?: number): void;
  /** A receive_v1 event as Feishu sends it (schema 2.0). */
  messageEvent(options: {
    text: string;
    chatId?: string;
    chatType?: "p2p" | "group";
    senderOpenId?: string;
    mentionBot?: boolean;
    eventId?: string;
    messageId?: string;
    createTimeMs?: number;
    threadId?: string;
    token?: string;
  }): Record<string, unknown>;
  /** Posts an event to a webhook, plain or encrypted (and signed) with `encryptKey`; stamped `timestampMs` (default now), as a replay keeps its first stamp. */
  deliverWebhook(
    url: string,
    event: unknown,
    encryptKey?: string,
    options?: { timestampMs?: number },
  ): Promise<{ status: number; body: string }>;
  waitForSent(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

export async function startFakeFeishu(
  options: { appId?: string; appSecret?: string; appName?: string } = {},
): Promise<FakeFeishu> {
  const appId = options.appId ?? FAKE_APP_ID;
  const appSecret = options.appSecret ?? FAKE_APP_SECRET;
  const token = `t-${randomBytes(6).toString("hex")}`;
  const sent: FeishuSentMessage[] = [];
  const byUuid = new Map<string, string>();
  const failures: FeishuFailure[] = [];
  const watchers = new Set<() => void>();
  const hub = createLongConnectionHub();
  let messageCounter = 0;
  let eventCounter = 0;
  const state = { sendAttempts: 0, tokenRequests: 0 };

  const server: Server = createServer((request, response) => void handle(request, response));
  server.on("upgrade", (request, socket) => {
    if ((request.url ?? "").startsWith("/ws")) hub.upgrade(request, socket);
    else socket.destroy();
  });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const url = new URL(request.url ?? "/", "http://fake");
    const reply = (status: number, payload: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload));
    const authorized = request.headers.authorization === `Bearer ${token}`;

    if (url.pathname === "/open-apis/auth/v3/tenant_access_token/internal") {
      state.tokenRequests += 1;
      if (body.app_id !== appId) return reply(400, { code: 10003, msg: "invalid param: app_id not found" });
      if (body.app_secret !== appSecret) return reply(400, { code: 10014, msg: "app secret invalid" });
      return reply(200, { code: 0, msg: "ok", tenant_access_token: token, expire: 7200 });
    }
    if (url.pathname === "/callback/ws/endpoint") {
      if (body.AppID !== appId || body.AppSecret !== appSecret)
        return reply(200, { code: 1000040351, msg: "app credentials invalid", data: {} });
      const { port } = server.address() as AddressInfo;
      return reply(200, {
        code: 0,
        msg: "ok",
        data: {
          URL: `ws://127.0.0.1:${port}/ws?device_id=fake-device&service_id=1`,
          ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 120, ReconnectNonce: 30 },
        },
      });
    }
    if (!authorized)
      return reply(400, {
        code: 99991663,
        msg: "Invalid access token for authorization. Please make a request with token attached.",
      });
    if (url.pathname === "/open-apis/bot/v3/info" && request.method === "GET") {
      return reply(200, {
        code: 0,
        msg: "ok",
        bot: {
          activate_status: 2,
          app_name: options.appName ?? "Laoding Feishu",
          avatar_url: "",
          ip_white_list: [],
          open_id: FAKE_BOT_OPEN_ID,
        },
      });
    }
    const replyMatch = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(url.pathname);
    if ((url.pathname === "/open-apis/im/v1/messages" || replyMatch) && request.method === "POST") {
      state.sendAttempts += 1;
      const failure = failures.shift();
      if (failure) {
        notify();
        return reply(failure.status, { code: failure.code, msg: failure.msg });
      }
      const uuid = typeof body.uuid === "string" ? body.uuid : undefined;
      const known = uuid ? byUuid.get(uuid) : undefined;
      if (known) return reply(200, { code: 0, msg: "success", data: { message_id: known } });
      messageCounter += 1;
      const messageId = `om_sent_${messageCounter}`;
      if (uuid) byUuid.set(uuid, messageId);
      const content = String(body.content);
      sent.push({
        kind: replyMatch ? "reply" : "create",
        messageId,
        ...(replyMatch ? { replyTo: replyMatch[1] as string } : { receiveId: String(body.receive_id) }),
        msgType: String(body.msg_type),
        content,
        text: textOf(String(body.msg_type), content),
        ...(body.reply_in_thread !== undefined ? { replyInThread: Boolean(body.reply_in_thread) } : {}),
        ...(uuid ? { uuid } : {}),
        at: Date.now(),
      });
      notify();
      return reply(200, {
        code: 0,
        msg: "success",
        data: { message_id: messageId, chat_id: "oc_x", msg_type: body.msg_type },
      });
    }
    return reply(404, { code: 404, msg: `fake feishu: no route ${request.method} ${url.pathname}` });
  }

  function notify() {
    for (const watcher of watchers) watcher();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    domain: `http://127.0.0.1:${port}`,
    sent,
    get sendAttempts() {
      return state.sendAttempts;
    },
    get tokenRequests() {
      return state.tokenRequests;
    },
    longConnection: hub,
    failNext(failure, times = 1) {
      for (let index = 0; index < times; index += 1) failures.push(failure);
    },
    messageEvent(event) {
      eventCounter += 1;
      const mention = event.mentionBot
        ? [
            {
              key: "@_user_1",
              id: { open_id: FAKE_BOT_OPEN_ID, union_id: "on_x", user_id: null },
              name: "Laoding",
              tenant_key: "t",
            },
          ]
        : [];
      return {
        schema: "2.0",
        header: {
          event_id: event.eventId ?? `ev_${eventCounter}`,
          event_type: "im.message.receive_v1",
          create_time: String(Date.now()),
          token: event.token ?? "verify-me",
          app_id: appId,
          tenant_key: "t",
        },
        event: {
          sender: {
            sender_id: { open_id: event.senderOpenId ?? "ou_user1", union_id: "on_u", user_id: null },
            sender_type: "user",
            tenant_key: "t",
          },
          message: {
            message_id: event.messageId ?? `om_in_${eventCounter}`,
            chat_id: event.chatId ?? "oc_chat1",
            chat_type: event.chatType ?? "p2p",
            message_type: "text",
            content: JSON.stringify({ text: event.mentionBot ? `@_user_1 ${event.text}` : event.text }),
            create_time: String(event.createTimeMs ?? Date.now()),
            mentions: mention,
            ...(event.threadId ? { thread_id: event.threadId, root_id: "om_root" } : {}),
          },
        },
      };
    },
    async deliverWebhook(url, event, encryptKey, stamp = {}) {
      let body = JSON.stringify(event);
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (encryptKey) {
        const iv = randomBytes(16);
        const cipher = createCipheriv("aes-256-cbc", createHash("sha256").update(encryptKey).digest(), iv);
        body = JSON.stringify({
          encrypt: Buffer.concat([iv, cipher.update(body, "utf8"), cipher.final()]).toString("base64"),
        });
        const timestamp = String(Math.floor((stamp.timestampMs ?? Date.now()) / 1000));
        const nonce = randomBytes(8).toString("hex");
        headers["x-lark-request-timestamp"] = timestamp;
        headers["x-lark-request-nonce"] = nonce;
        headers["x-lark-signature"] = createHash("sha256")
          .update(timestamp + nonce + encryptKey + body)
          .digest("hex");
      }
      const response = await fetch(url, { method: "POST", headers, body });
      return { status: response.status, body: await response.text() };
    },
    waitForSent(count, timeoutMs = 10_000) {
      if (sent.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`fake feishu: ${sent.length} messages sent, waited for ${count}`));
        }, timeoutMs);
        function check() {
          if (sent.length < count) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve();
        }
        watchers.add(check);
      });
    },
    async close() {
      hub.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The visible text of a sent message: text content, or the text of a post's elements. */
function textOf(msgType: string, content: string): string {
  const json = JSON.parse(content) as { text?: string; zh_cn?: { content: { text?: string }[][] } };
  if (msgType === "text") return json.text ?? "";
  return (json.zh_cn?.content ?? []).map((line) => line.map((element) => element.text ?? "").join("")).join("\n");
}
