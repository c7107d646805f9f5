/**
 * An `im.message.receive_v1` event (as the Lark SDK's dispatcher hands it over: header
 * and event fields side by side) as a platform message. The bot's own messages, messages
 * older than 30 minutes (a replay after a long outage) and non-text messages are dropped;
 * the bot's mention placeholder (`@_user_1`) is taken out, other people's become `@name`.
 */
import { z } from "zod";
import type { InboundEvent } from "../chat-platform.js";

/** Older than this, a message is a replay nobody waits for any more. */
export const FEISHU_MAX_MESSAGE_AGE_MS = 30 * 60 * 1000;

const mentionSchema = z.object({
  key: z.string(),
  id: z.object({ open_id: z.string().optional() }).partial().optional(),
  name: z.string().optional(),
});

/** Tolerant: only what we read, the rest of the platform's fields pass by. */
export const feishuMessageEventSchema = z.object({
  event_id: z.string().optional(),
  token: z.string().optional(),
  sender: z.object({
    sender_id: z.object({ open_id: z.string().optional() }).optional(),
    sender_type: z.string().optional(),
  }),
  message: z.object({
    message_id: z.string(),
    chat_id: z.string(),
    chat_type: z.string(),
    message_type: z.string(),
    content: z.string(),
    create_time: z.string().optional(),
    mentions: z.array(mentionSchema).optional(),
    thread_id: z.string().optional(),
    parent_id: z.string().optional(),
  }),
});

export type FeishuEventOutcome = { event: InboundEvent } | { dropped: string };

export function feishuEventToInbound(
  raw: unknown,
  bot: { appId: string; openId: string },
  now: number,
): FeishuEventOutcome {
  const parsed = feishuMessageEventSchema.safeParse(raw);
  if (!parsed.success) return { dropped: "not a message event we understand" };
  const { sender, message, event_id: eventId } = parsed.data;
  const senderId = sender.sender_id?.open_id ?? "";
  if (senderId === bot.openId || sender.sender_type === "app") return { dropped: "the bot's own message" };
  const sentAt = Number(message.create_time);
  if (Number.isFinite(sentAt) && now - sentAt > FEISHU_MAX_MESSAGE_AGE_MS) return { dropped: "older than 30 minutes" };
  let text = extractText(message.message_type, message.content);
  if (text === undefined) return { dropped: `message type ${message.message_type} is not read` };
  let mentioned = false;
  for (const mention of message.mentions ?? []) {
    const isBot = mention.id?.open_id === bot.openId;
    mentioned ||= isBot;
    text = text.split(mention.key).join(isBot ? "" : `@${mention.name ?? ""}`);
  }
  text = text.replace(/[ \t]{2,}/g, " ").trim();
  return {
    event: {
      dedupKeys: [
        ...(eventId ? [`feishu:${bot.appId}:event:${eventId}`] : []),
        `feishu:${bot.appId}:message:${message.message_id}`,
      ],
      message: {
        channel: "feishu",
        chatId: message.chat_id,
        userId: senderId,
        messageId: message.message_id,
        text,
        chatType: message.chat_type === "p2p" ? "private" : "group",
        mentionedBot: mentioned,
        ...(message.parent_id ? { replyToMessageId: message.parent_id } : {}),
        ...(message.thread_id ? { threadId: message.thread_id } : {}),
      },
    },
  };
}

/** Text of a `text` message, or the text runs of a `post` (rich text). */
function extractText(type: string, content: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (type === "text")
    return typeof (json as { text?: unknown }).text === "string" ? (json as { text: string }).text : undefined;
  if (type !== "post") return undefined;
  type PostBody = { title?: string; content?: unknown };
  const post = json as PostBody;
  // A received post is either the body itself or keyed by language (zh_cn, en_us).
  const body: PostBody | undefined = Array.isArray(post.content)
    ? post
    : (Object.values(json as Record<string, PostBody>).find((value) => value && Array.isArray(value.content)) as
        | PostBody
        | undefined);
  if (!body || !Array.isArray(body.content)) return undefined;
  const lines = (body.content as { tag?: string; text?: string; user_id?: string }[][]).map((line) =>
    (Array.isArray(line) ? line : [])
      .map((element) => (element.tag === "at" ? (element.user_id ?? "") : (element.text ?? "")))
      .join(""),
  );
  return [body.title ?? "", ...lines].filter((line) => line !== "").join("\n");
}
