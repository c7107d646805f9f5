/**
 * A loopback fake of the Telegram Bot API (enough for grammY): `POST /bot<token>/<method>`
 * with JSON bodies, answered `{ ok: true, result }` or `{ ok: false, error_code,
 * description, parameters }`. getUpdates holds until an update arrives or its timeout
 * passes, drops updates below `offset` and ends at once when the client aborts. Tests
 * push user messages (or whole updates, to re-deliver them), script failures of the next
 * calls of a method (429, entity errors), and read every call the bot made.
 *
 * Streaming (issue 28): sendMessageDraft is recorded like every call (an older server that
 * does not know it is `refuseDrafts`; a group's chat refuses drafts as Telegram does), every
 * message the bot sent keeps its current text, editMessageText changes it ("message is not
 * modified" when unchanged, "message to edit not found" for an unknown or deleted one), and
 * `shows(chatId)` is what the chat finally shows: the bot's messages with their current text
 * (`waitFor` checks its condition when a call arrives and again once it was answered).
 *
 * For several bot processes on one token (test/channels/replicas.test.ts): every
 * getUpdates is recorded in `polls` (when it began and ended, the client's port, and who
 * `identify` says made it), and `hold(method)` keeps that method's calls waiting, unrecorded
 * and unanswered, until `release(method)`; a held call whose client went away meanwhile
 * (a killed process) is dropped, never recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type TelegramCall = { token: string; method: string; body: Record<string, unknown>; at: number };
export type TelegramFailure = { error_code: number; description: string; parameters?: { retry_after?: number } };
export type FakeUpdate = { update_id: number; message?: Record<string, unknown> };
/** One getUpdates request: `endedAt` is set when it was answered or its client went away. */
export type TelegramPoll = {
  token: string;
  offset: number;
  startedAt: number;
  endedAt?: number;
  remotePort: number;
  by?: string | undefined;
};

export type FakeTelegramOptions = {
  /** Names the client of a getUpdates request from its TCP port (called when the request arrives). */
  identify?: (remotePort: number) => string | undefined;
  /** An older Bot API server: sendMessageDraft is an unknown method (404). */
  refuseDrafts?: boolean;
};

/** A message the bot sent, as the chat shows it now. */
export type FakeMessage = {
  messageId: number;
  chatId: string;
  /** The current text, as sent or last edited (HTML when parseMode is "HTML"). */
  text: string;
  parseMode?: string;
  /** Times it was edited. */
  edits: number;
  replyTo?: number;
  threadId?: number;
};

export type FakeTelegram = {
  /** The API root to give grammY (TELEGRAM_API_ROOT). */
  apiRoot: string;
  calls: TelegramCall[];
  /** Every getUpdates request, in the order they arrived. */
  polls: TelegramPoll[];
  /** Calls of `method` wait from now on (not recorded, not answered) until `release(method)`. */
  hold(method: string): void;
  /** Lets the held calls of `method` through; those whose client is gone are dropped. */
  release(method: string): void;
  /** Calls waiting on a hold. */
  held(): number;
  /** Makes a bot token valid; its bot answers getMe with this username. */
  addBot(token: string, username: string): { id: number };
  /** A user writes to the bot; returns the update (push it again to re-deliver). */
  userMessage(
    token: string,
    message: {
      chatId: number;
      userId: number;
      text: string;
      chatType?: "private" | "group" | "supergroup";
      firstName?: string;
      entities?: unknown[];
      replyToBot?: boolean;
      threadId?: number;
    },
  ): FakeUpdate;
  pushUpdate(token: string, update: FakeUpdate): void;
  /** The next `times` calls of `method` fail with `failure`. */
  failNext(method: string, failure: TelegramFailure, times?: number): void;
  sent(token?: string): TelegramCall[];
  /** What a chat shows: the bot's messages (of every bot, or of `token`'s), oldest first, with their current text. */
  shows(chatId: number | string, token?: string): FakeMessage[];
  /** The user deletes one of the bot's messages: it can no longer be edited. */
  deleteMessage(token: string, chatId: number | string, messageId: number): void;
  /** Resolves when `predicate` holds for the calls (checked when a call arrives and when it was answered). */
  waitFor(predicate: (calls: TelegramCall[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

type BotState = {
  id: number;
  username: string;
  updates: FakeUpdate[];
  waiters: (() => void)[];
  nextMessageId: number;
  /** The bot's messages by `${chatId}:${messageId}`. */
  messages: Map<string, FakeMessage>;
};

const NOT_MODIFIED =
  "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message";

export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const bots = new Map<string, BotState>();
  const calls: TelegramCall[] = [];
  const polls: TelegramPoll[] = [];
  const holds = new Map<string, (() => void)[]>();
  const failures = new Map<string, TelegramFailure[]>();
  const watchers = new Set<() => void>();
  let nextUpdateId = 1000;
  let nextBotId = 7000;

  const server: Server = createServer((request, response) => void handle(request, response));

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? "");
    const reply = (status: number, body: unknown) => {
      if (!response.destroyed)
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      // A waiter on what the chat shows (shows()) is checked once the call has changed it, too.
      for (const watcher of [...watchers]) watcher();
    };
    if (!match) return reply(404, { ok: false, error_code: 404, description: "Not Found" });
    const [, token = "", method = ""] = match;
    const raw = Buffer.concat(chunks).toString("utf8");
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const bot = bots.get(token);
    if (!bot) return reply(401, { ok: false, error_code: 401, description: "Unauthorized" });
    if (holds.has(method)) {
      let gone = false;
      response.once("close", () => (gone = !response.writableFinished));
      const waiting = holds.get(method);
      if (waiting) await new Promise<void>((resolve) => waiting.push(resolve));
      if (gone || response.destroyed || request.socket.destroyed) return;
    }
    if (method !== "getUpdates") {
      calls.push({ token, method, body, at: Date.now() });
      for (const watcher of watchers) watcher();
    }
    const failure = failures.get(method)?.shift();
    if (failure) return reply(failure.error_code, { ok: false, ...failure });
    switch (method) {
      case "getMe":
        return reply(200, {
          ok: true,
          result: {
            id: bot.id,
            is_bot: true,
            first_name: bot.username,
            username: bot.username,
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          },
        });
      case "deleteWebhook":
      case "setWebhook":
      case "setMyCommands":
      case "sendChatAction":
        return reply(200, { ok: true, result: true });
      case "sendMessage": {
        const refused = refuseText(body);
        if (refused) return reply(400, { ok: false, error_code: 400, description: refused });
        bot.nextMessageId += 1;
        const message: FakeMessage = {
          messageId: bot.nextMessageId,
          chatId: String(body.chat_id),
          text: String(body.text),
          ...(typeof body.parse_mode === "string" ? { parseMode: body.parse_mode } : {}),
          edits: 0,
          ...(isRecord(body.reply_parameters) ? { replyTo: Number(body.reply_parameters.message_id) } : {}),
          ...(body.message_thread_id !== undefined ? { threadId: Number(body.message_thread_id) } : {}),
        };
        bot.messages.set(`${message.chatId}:${message.messageId}`, message);
        return reply(200, { ok: true, result: messageResult(message) });
      }
      case "editMessageText": {
        const message = bot.messages.get(`${String(body.chat_id)}:${Number(body.message_id)}`);
        if (!message)
          return reply(400, { ok: false, error_code: 400, description: "Bad Request: message to edit not found" });
        const refused = refuseText(body);
        if (refused) return reply(400, { ok: false, error_code: 400, description: refused });
        const parseMode = typeof body.parse_mode === "string" ? body.parse_mode : undefined;
        if (message.text === String(body.text) && message.parseMode === parseMode)
          return reply(400, { ok: false, error_code: 400, description: NOT_MODIFIED });
        message.text = String(body.text);
        if (parseMode) message.parseMode = parseMode;
        else delete message.parseMode;
        message.edits += 1;
        return reply(200, { ok: true, result: messageResult(message) });
      }
      case "sendMessageDraft": {
        if (options.refuseDrafts)
          return reply(404, { ok: false, error_code: 404, description: "Not Found: method not found" });
        if (Number(body.chat_id) < 0)
          return reply(400, { ok: false, error_code: 400, description: "Bad Request: TEXTDRAFT_PEER_INVALID" });
        if (!Number.isInteger(body.draft_id) || body.draft_id === 0)
          return reply(400, { ok: false, error_code: 400, description: "Bad Request: invalid draft_id" });
        if (visibleLength(typeof body.text === "string" ? body.text : "", body.parse_mode) > 4096)
          return reply(400, { ok: false, error_code: 400, description: "Bad Request: text is too long" });
        return reply(200, { ok: true, result: true });
      }
      case "getUpdates": {
        const poll: TelegramPoll = {
          token,
          offset: typeof body.offset === "number" ? body.offset : 0,
          startedAt: Date.now(),
          remotePort: request.socket.remotePort ?? 0,
          by: options.identify?.(request.socket.remotePort ?? 0),
        };
        polls.push(poll);
        response.once("close", () => (poll.endedAt ??= Date.now()));
        const updates = await nextUpdates(bot, body, request);
        poll.endedAt ??= Date.now();
        return reply(200, { ok: true, result: updates });
      }
      default:
        return reply(404, { ok: false, error_code: 404, description: `Not Found: method ${method}` });
    }
  }

  async function nextUpdates(
    bot: BotState,
    body: Record<string, unknown>,
    request: IncomingMessage,
  ): Promise<FakeUpdate[]> {
    const offset = typeof body.offset === "number" ? body.offset : 0;
    bot.updates = bot.updates.filter((update) => update.update_id >= offset);
    if (bot.updates.length > 0) return bot.updates.slice(0, Number(body.limit ?? 100));
    const timeoutMs = Number(body.timeout ?? 0) * 1000;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        bot.waiters = bot.waiters.filter((waiter) => waiter !== done);
        resolve();
      }
      bot.waiters.push(done);
      request.once("close", done);
    });
    return bot.updates.filter((update) => update.update_id >= offset).slice(0, Number(body.limit ?? 100));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const stateOf = (token: string) => {
    const bot = bots.get(token);
    if (!bot) throw new Error(`fake telegram: no bot with token ${token}`);
    return bot;
  };

  function release(method: string) {
    const waiting = holds.get(method) ?? [];
    holds.delete(method);
    for (const resume of waiting) resume();
  }

  function pushUpdate(token: string, update: FakeUpdate) {
    const bot = stateOf(token);
    bot.updates.push(update);
    for (const waiter of [...bot.waiters]) waiter();
  }

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    polls,
    hold(method) {
      if (!holds.has(method)) holds.set(method, []);
    },
    release,
    held: () => [...holds.values()].reduce((total, waiting) => total + waiting.length, 0),
    addBot(token, username) {
      nextBotId += 1;
      bots.set(token, { id: nextBotId, username, updates: [], waiters: [], nextMessageId: 500, messages: new Map() });
      return { id: nextBotId };
    },
    userMessage(token, message) {
      const bot = stateOf(token);
      bot.nextMessageId += 1;
      nextUpdateId += 1;
      const chatType = message.chatType ?? "private";
      const update: FakeUpdate = {
        update_id: nextUpdateId,
        message: {
          message_id: bot.nextMessageId,
          date: Math.floor(Date.now() / 1000),
          chat:
            chatType === "private"
              ? { id: message.chatId, type: "private", first_name: message.firstName ?? "Ann" }
              : { id: message.chatId, type: chatType, title: "Team" },
          from: { id: message.userId, is_bot: false, first_name: message.firstName ?? "Ann" },
          text: message.text,
          ...(message.entities ? { entities: message.entities } : commandEntities(message.text)),
          ...(message.replyToBot
            ? {
                reply_to_message: {
                  message_id: 1,
                  date: 0,
                  chat: { id: message.chatId, type: chatType },
                  from: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
                  text: "earlier",
                },
              }
            : {}),
          ...(message.threadId ? { message_thread_id: message.threadId, is_topic_message: true } : {}),
        },
      };
      pushUpdate(token, update);
      return update;
    },
    pushUpdate,
    failNext(method, failure, times = 1) {
      failures.set(method, [...(failures.get(method) ?? []), ...Array.from({ length: times }, () => failure)]);
    },
    sent: (token) =>
      calls.filter((call) => call.method === "sendMessage" && (token === undefined || call.token === token)),
    shows: (chatId, token) =>
      [...bots.entries()]
        .filter(([key]) => token === undefined || key === token)
        .flatMap(([, bot]) => [...bot.messages.values()])
        .filter((message) => message.chatId === String(chatId))
        .sort((a, b) => a.messageId - b.messageId)
        .map((message) => ({ ...message })),
    deleteMessage(token, chatId, messageId) {
      stateOf(token).messages.delete(`${String(chatId)}:${messageId}`);
    },
    waitFor(predicate, timeoutMs = 10_000) {
      if (predicate(calls)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(
            new Error(
              `fake telegram: condition not met within ${timeoutMs} ms; calls: ${calls.map((call) => call.method).join(", ")}`,
            ),
          );
        }, timeoutMs);
        function check() {
          if (!predicate(calls)) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve();
        }
        watchers.add(check);
      });
    },
    async close() {
      for (const method of [...holds.keys()]) release(method);
      for (const bot of bots.values()) for (const waiter of [...bot.waiters]) waiter();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Telegram's refusal of a message's text: empty, or over 4096 characters once its entities are parsed. */
function refuseText(body: Record<string, unknown>): string | undefined {
  const length = visibleLength(typeof body.text === "string" ? body.text : "", body.parse_mode);
  if (length === 0) return "Bad Request: message text is empty";
  if (length > 4096) return "Bad Request: message is too long";
  return undefined;
}

/** The text's length as Telegram counts it: HTML tags are not characters, entities are one each; surrounding white space is trimmed. */
function visibleLength(text: string, parseMode: unknown): number {
  const visible = parseMode === "HTML" ? text.replace(/<[^>]*>/g, "").replace(/&(lt|gt|amp|quot|#\d+);/g, "x") : text;
  return visible.trim().length;
}

function messageResult(message: FakeMessage) {
  return {
    message_id: message.messageId,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(message.chatId), type: Number(message.chatId) < 0 ? "supergroup" : "private" },
    text: message.text,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** What Telegram adds to a message that starts with a command. */
function commandEntities(text: string): { entities?: unknown[] } {
  const command = /^\/\w+(@\w+)?/.exec(text);
  if (command) return { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] };
  const mention = /@\w+/.exec(text);
  return mention ? { entities: [{ type: "mention", offset: mention.index, length: mention[0].length }] } : {};
}

/** Entities of a message that mentions `@username` wherever it appears. */
export function mentionEntity(text: string, username: string): unknown[] {
  const offset = text.indexOf(`@${username}`);
  return offset < 0 ? [] : [{ type: "mention", offset, length: username.length + 1 }];
}
