/**
 * One call to Feishu's open API through the SDK, with its failure read once: the SDK
 * throws on an HTTP error (the answer's `code` and `msg` in `response.data`) and returns
 * `code != 0` otherwise; both become a DeliveryError (rate limits and server errors
 * retryable, after the platform's reset time when it gave one), with the code and HTTP
 * status kept so the caller can tell a card that is gone from a card that is busy.
 * Error text reaches the console, the outbox table and the chat: secrets are redacted.
 */
import { DeliveryError } from "../chat-platform.js";

/** Codes Feishu answers when a bot calls too fast (per chat 5 QPS; app-wide limits). */
const RATE_LIMIT_CODES = new Set([230020, 11232, 99991400]);

export type FeishuAnswer<T> = { code?: number; msg?: string; data?: T };

export type FeishuOutcome<T> =
  | { ok: true; data: T | undefined }
  | { ok: false; code: number | undefined; status: number | undefined; error: DeliveryError };

/** What the words of a failure call the thing that failed: "the message", "the card update". */
export type FeishuAction = string;

export async function callFeishu<T>(
  request: () => Promise<FeishuAnswer<T>>,
  action: FeishuAction,
  redact: (text: string) => string,
): Promise<FeishuOutcome<T>> {
  let answer: FeishuAnswer<T>;
  try {
    answer = await request();
  } catch (error) {
    return thrown(error, action, redact);
  }
  if (answer.code !== undefined && answer.code !== 0)
    return {
      ok: false,
      code: answer.code,
      status: undefined,
      error: codeError(redact, action, answer.code, answer.msg, undefined),
    };
  return { ok: true, data: answer.data };
}

/** The data of a successful call; throws the DeliveryError of a failed one. */
export function dataOf<T>(outcome: FeishuOutcome<T>): T | undefined {
  if (!outcome.ok) throw outcome.error;
  return outcome.data;
}

function thrown(error: unknown, action: FeishuAction, redact: (text: string) => string): FeishuOutcome<never> {
  const response = (
    error as {
      response?: { status?: number; data?: { code?: number; msg?: string }; headers?: Record<string, string> };
    }
  ).response;
  if (!response)
    return {
      ok: false,
      code: undefined,
      status: undefined,
      error: new DeliveryError(redact(`Feishu unreachable: ${describeError(error)}`), true, undefined, {
        cause: error,
      }),
    };
  const code = response.data?.code;
  const status = response.status;
  if (code !== undefined)
    return {
      ok: false,
      code,
      status,
      error: codeError(redact, action, code, response.data?.msg, status, retryAfter(response.headers)),
    };
  return {
    ok: false,
    code: undefined,
    status,
    error: new DeliveryError(
      `Feishu answered HTTP ${status ?? "?"}`,
      status === 429 || (status ?? 0) >= 500,
      retryAfter(response.headers),
      { cause: error },
    ),
  };
}

function codeError(
  redact: (text: string) => string,
  action: FeishuAction,
  code: number,
  message: string | undefined,
  status: number | undefined,
  retryAfterMs?: number,
): DeliveryError {
  const retryable = RATE_LIMIT_CODES.has(code) || status === 429 || (status ?? 0) >= 500;
  return new DeliveryError(
    redact(`Feishu refused ${action}: ${message ?? "no message"} (code ${code}${status ? `, HTTP ${status}` : ""})`),
    retryable,
    retryAfterMs,
  );
}

function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  const value = Number(headers?.["x-ogw-ratelimit-reset"] ?? headers?.["retry-after"]);
  return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
}

export function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  return `${error instanceof Error ? error.message : String(error)}${cause?.code ? ` (${cause.code})` : ""}`;
}

/** Where a message goes: a reply to the user's message (in its thread for topic groups), or the chat. */
export type MessageTarget = { chatId: string; replyTo?: string | undefined; threadId?: string | undefined };

type MessageApi = {
  reply(payload: {
    path: { message_id: string };
    data: { content: string; msg_type: string; reply_in_thread?: boolean; uuid?: string };
  }): Promise<FeishuAnswer<{ message_id?: string }>>;
  create(payload: {
    params: { receive_id_type: "chat_id" };
    data: { receive_id: string; content: string; msg_type: string; uuid?: string };
  }): Promise<FeishuAnswer<{ message_id?: string }>>;
};

/**
 * Sends one message; `uuid` makes a resend within the hour return the first message
 * instead of showing a second one. Resolves with the message id (when Feishu gave one).
 */
export async function sendMessage(
  api: MessageApi,
  redact: (text: string) => string,
  target: MessageTarget,
  message: { msgType: string; content: string; uuid: string },
): Promise<string | undefined> {
  const { msgType: msg_type, content, uuid } = message;
  const outcome = await callFeishu(
    () =>
      target.replyTo
        ? api.reply({
            path: { message_id: target.replyTo },
            data: { content, msg_type, reply_in_thread: target.threadId !== undefined, uuid },
          })
        : api.create({
            params: { receive_id_type: "chat_id" },
            data: { receive_id: target.chatId, content, msg_type, uuid },
          }),
    "the message",
    redact,
  );
  return dataOf(outcome)?.message_id;
}
