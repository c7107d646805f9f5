/**
 * A loopback fake of the Feishu open platform: tenant access token, bot info, message
 * create and reply (a `uuid` seen before returns the first message instead of a second
 * one, as Feishu does), interactive messages (a JSON 1.0 card, or a CardKit card entity
 * by its id: feishu-cards.ts) and their update by the message patch API, scripted
 * failures (rate limits) per kind of call, CardKit refused as for an app without the
 * scope, the long connection's endpoint and WebSocket (feishu-long-connection.ts), and
 * delivery of events to the bot's webhook, plain or encrypted and signed with the
 * encrypt key. `chat()` says what a chat finally shows.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createFakeCardKit, type FakeCard, type FeishuCardUpdate } from "./feishu-cards.js";
import { createLongConnectionHub, type LongConnectionHub } from "./feishu-long-connection.js";

export type { FakeCard, FeishuCardUpdate } from "./feishu-cards.js";

export const FAKE_APP_ID = "cli_0123456789abcdef";
export const FAKE_APP_SECRET = "fake-app-secret";
export const FAKE_BOT_OPEN_ID = "ou_bot0000000000";

export type FeishuSentMessage = {
  kind: "create" | "reply";
  messageId: string;
  replyTo?: string;
  receiveId?: string;
  /** The chat it went to (a reply: the chat of the message it answers). */
  chatId: string;
  msgType: string;
  content: string;
  /** What the message shows now: a post's text, a card's Markdown (updated as the card or a patch changes it). */
  text: string;
  /** The CardKit card entity it shows. */
  cardId?: string;
  recalled?: boolean;
  replyInThread?: boolean;
  uuid?: string;
  at: number;
};
export type FeishuFailure = { status: number; code: number; msg: string; headers?: Record<string, string> };
/** Which calls a scripted failure answers: message create/reply, CardKit (create and updates), message patch. */
export type FeishuEndpoint = "send" | "cardkit" | "patch";
export type FeishuPatch = { messageId: string; text: string; at: number; refused?: number };
/** A message as the chat shows it now. */
export type FeishuShownMessage = {
  messageId: string;
  msgType: string;
  text: string;
  replyTo?: string;
  replyInThread?: boolean;
  /** A CardKit card: whether it is still streaming. */
  streaming?: boolean;
};

export type FakeFeishu = {
  domain: string;
  sent: FeishuSentMessage[];
  /** Calls of the send endpoints, including refused ones and uuid repeats. */
  sendAttempts: number;
  tokenRequests: number;
  longConnection: LongConnectionHub;
  /** Every CardKit card operation (content, element, settings), refused ones included, in order. */
  cardUpdates: FeishuCardUpdate[];
  /** Every message patch, refused ones included. */
  patches: FeishuPatch[];
  card(cardId: string): FakeCard | undefined;
  /** The next `times` calls of `endpoint` (default: message sends) fail so. */
  failNext(failure: FeishuFailure, times?: number, endpoint?: FeishuEndpoint): void;
  /** From now on CardKit is refused: the app lacks cardkit:card:write ("scope"), or CardKit does not exist ("absent": 404); false: allowed again. */
  refuseCardKit(how?: "scope" | "absent" | false): void;
  /** The card entity is gone: deleted, or past its 14 days. */
  breakCard(cardId: string, how: "deleted" | "expired"): void;
  /** Feishu closes streaming mode on its own (10 minutes after it opened). */
  closeStreaming(cardId: string): void;
  /** A user or admin recalled the message: patches are refused. */
  recallMessage(messageId: string): void;
  /** What the chat shows now, oldest first (recalled messages left out). */
  chat(chatId: string): FeishuShownMessage[];
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
  const failures: Record<FeishuEndpoint, FeishuFailure[]> = { send: [], cardkit: [], patch: [] };
  const patches: FeishuPatch[] = [];
  /** Inbound message id → its chat, so a reply lands in the right chat. */
  const inboundChats = new Map<string, string>();
  const cardKit = createFakeCardKit(() => {
    for (const message of sent) if (message.cardId) message.text = cardKit.textOf(message.cardId);
    notify();
  });
  let cardKitRefused: "scope" | "absent" | false = false;
  const watchers = new Set<() => void>();
  const hub = createLongConnectionHub();
  let messageCounter = 0;
  let eventCounter = 0;
  const state = { sendAttempts: 0, tokenRequests: 0 };
  const chatOf = (messageId: string) =>
    inboundChats.get(messageId) ?? sent.find((message) => message.messageId === messageId)?.chatId ?? "oc_unknown";

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
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) =>
      response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(payload));
    const fail = (endpoint: FeishuEndpoint) => {
      const failure = failures[endpoint].shift();
      if (!failure) return false;
      reply(failure.status, { code: failure.code, msg: failure.msg }, failure.headers);
      notify();
      return true;
    };
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
      if (fail("send")) return;
      const uuid = typeof body.uuid === "string" ? body.uuid : undefined;
      const known = uuid ? byUuid.get(uuid) : undefined;
      if (known) return reply(200, { code: 0, msg: "success", data: { message_id: known } });
      const content = String(body.content);
      const msgType = String(body.msg_type);
      const cardId = msgType === "interactive" ? cardEntityOf(content) : undefined;
      if (cardId !== undefined && !cardKit.cards.has(cardId))
        return reply(400, { code: 230099, msg: "Failed to create card content: the card entity does not exist" });
      messageCounter += 1;
      const messageId = `om_sent_${messageCounter}`;
      if (uuid) byUuid.set(uuid, messageId);
      sent.push({
        kind: replyMatch ? "reply" : "create",
        messageId,
        ...(replyMatch ? { replyTo: replyMatch[1] as string } : { receiveId: String(body.receive_id) }),
        chatId: replyMatch ? chatOf(replyMatch[1] as string) : String(body.receive_id),
        msgType,
        content,
        text: cardId ? cardKit.textOf(cardId) : textOf(msgType, content),
        ...(cardId ? { cardId } : {}),
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
    const patchMatch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(url.pathname);
    if (patchMatch && request.method === "PATCH") {
      if (fail("patch")) return;
      const answer = patchMessage(patchMatch[1] as string, String(body.content));
      return reply(answer.status, answer.payload);
    }
    if (url.pathname.startsWith("/open-apis/cardkit/v1/cards")) {
      if (cardKitRefused === "absent") return reply(404, "404 page not found");
      if (cardKitRefused === "scope")
        return reply(400, {
          code: 99991672,
          msg: "Access denied. One of the following scopes is required: [cardkit:card:write].",
        });
      if (fail("cardkit")) return;
      const answer = cardKitCall(request.method ?? "", url.pathname, body);
      if (answer) return reply(answer.status, answer.payload);
    }
    return reply(404, { code: 404, msg: `fake feishu: no route ${request.method} ${url.pathname}` });
  }

  function cardKitCall(method: string, path: string, body: Record<string, unknown>) {
    if (path === "/open-apis/cardkit/v1/cards" && method === "POST") return cardKit.create(body);
    const element = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/elements\/([^/]+)(\/content)?$/.exec(path);
    if (element && method === "PUT")
      return element[3]
        ? cardKit.content(element[1] as string, element[2] as string, body)
        : cardKit.element(element[1] as string, element[2] as string, body);
    const settings = /^\/open-apis\/cardkit\/v1\/cards\/([^/]+)\/settings$/.exec(path);
    if (settings && method === "PATCH") return cardKit.settings(settings[1] as string, body);
    return undefined;
  }

  function patchMessage(messageId: string, content: string) {
    const message = sent.find((candidate) => candidate.messageId === messageId);
    const text = textOf("interactive", content);
    const answer = (() => {
      if (!message) return { status: 400, payload: { code: 230001, msg: "invalid message_id" } };
      if (message.recalled) return { status: 400, payload: { code: 230011, msg: "The message was recalled" } };
      if (message.msgType !== "interactive" || message.cardId)
        return { status: 400, payload: { code: 230001, msg: "only interactive cards sent as JSON can be patched" } };
      const shared = (json: string) =>
        (JSON.parse(json) as { config?: { update_multi?: boolean } }).config?.update_multi === true;
      if (!shared(message.content) || !shared(content))
        return { status: 400, payload: { code: 230001, msg: "update_multi must be true before and after the update" } };
      message.content = content;
      message.text = text;
      return { status: 200, payload: { code: 0, msg: "success", data: {} } };
    })();
    const code = answer.payload.code;
    patches.push({ messageId, text, at: Date.now(), ...(code !== 0 ? { refused: code } : {}) });
    notify();
    return answer;
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
    cardUpdates: cardKit.updates,
    patches,
    card: (cardId) => cardKit.cards.get(cardId),
    failNext(failure, times = 1, endpoint = "send") {
      for (let index = 0; index < times; index += 1) failures[endpoint].push(failure);
    },
    refuseCardKit(how = "scope") {
      cardKitRefused = how;
    },
    breakCard(cardId, how) {
      const card = cardKit.cards.get(cardId);
      if (card) card.broken = how;
    },
    closeStreaming(cardId) {
      const card = cardKit.cards.get(cardId);
      if (card) card.streamingMode = false;
    },
    recallMessage(messageId) {
      const message = sent.find((candidate) => candidate.messageId === messageId);
      if (message) message.recalled = true;
    },
    chat(chatId) {
      return sent
        .filter((message) => message.chatId === chatId && !message.recalled)
        .map((message) => ({
          messageId: message.messageId,
          msgType: message.msgType,
          text: message.text,
          ...(message.replyTo ? { replyTo: message.replyTo } : {}),
          ...(message.replyInThread !== undefined ? { replyInThread: message.replyInThread } : {}),
          ...(message.cardId ? { streaming: cardKit.cards.get(message.cardId)?.streamingMode === true } : {}),
        }));
    },
    messageEvent(event) {
      eventCounter += 1;
      const inboundId = event.messageId ?? `om_in_${eventCounter}`;
      inboundChats.set(inboundId, event.chatId ?? "oc_chat1");
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
            message_id: inboundId,
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

/** The visible text of a sent message: text content, the text of a post's elements, a JSON 1.0 card's Markdown. */
function textOf(msgType: string, content: string): string {
  const json = JSON.parse(content) as {
    text?: string;
    zh_cn?: { content: { text?: string }[][] };
    elements?: { content?: string; text?: { content?: string } }[];
  };
  if (msgType === "text") return json.text ?? "";
  if (msgType === "interactive")
    return (json.elements ?? []).map((element) => element.content ?? element.text?.content ?? "").join("\n");
  return (json.zh_cn?.content ?? []).map((line) => line.map((element) => element.text ?? "").join("")).join("\n");
}

/** The card entity an interactive message shows (`{"type":"card","data":{"card_id":…}}`), if it shows one. */
function cardEntityOf(content: string): string | undefined {
  const json = JSON.parse(content) as { type?: string; data?: { card_id?: string } };
  return json.type === "card" ? String(json.data?.card_id ?? "") : undefined;
}
