/**
 * A Telegram update as a platform message: private or group chat, whether the bot was
 * addressed (an @mention, a reply to one of its messages, a command with its name or
 * with no name), and the text with the bot's own mention taken out.
 */
import type { Message, Update, UserFromGetMe } from "grammy/types";
import type { InboundEvent } from "../chat-platform.js";

export function telegramUpdateToEvent(update: Update, me: UserFromGetMe): InboundEvent | undefined {
  const message: Message | undefined = update.message;
  if (!message || message.text === undefined || !message.from || message.from.is_bot) return undefined;
  const group = message.chat.type === "group" || message.chat.type === "supergroup";
  if (!group && message.chat.type !== "private") return undefined;
  const text = message.text;
  const username = me.username.toLowerCase();
  const entities = message.entities ?? [];
  const slice = (entity: { offset: number; length: number }) =>
    text.slice(entity.offset, entity.offset + entity.length);
  const mentioned = entities.some(
    (entity) =>
      (entity.type === "mention" && slice(entity).toLowerCase() === `@${username}`) ||
      (entity.type === "text_mention" && entity.user.id === me.id),
  );
  const repliedTo = message.reply_to_message?.from?.id === me.id;
  const command = entities.find((entity) => entity.type === "bot_command" && entity.offset === 0);
  const commandTarget = command ? /@(\w+)$/.exec(slice(command))?.[1]?.toLowerCase() : undefined;
  // A command named for another bot is that bot's; one without a name is for every bot in the chat.
  if (command && commandTarget !== undefined && commandTarget !== username) return undefined;
  const name = [message.from.first_name, message.from.last_name].filter(Boolean).join(" ") || message.from.username;
  return {
    dedupKeys: [`telegram:${me.id}:update:${update.update_id}`],
    message: {
      channel: "telegram",
      chatId: String(message.chat.id),
      userId: String(message.from.id),
      messageId: String(message.message_id),
      text: stripMention(text, username),
      chatType: group ? "group" : "private",
      mentionedBot: mentioned || repliedTo || command !== undefined,
      ...(name ? { userName: name } : {}),
      ...(message.reply_to_message ? { replyToMessageId: String(message.reply_to_message.message_id) } : {}),
      ...(message.is_topic_message && message.message_thread_id !== undefined
        ? { threadId: String(message.message_thread_id) }
        : {}),
    },
  };
}

/** "@laoding_bot what is up" -> "what is up"; a command's own @name stays (the command parser reads it). */
function stripMention(text: string, username: string): string {
  const pattern = new RegExp(`(^|\\s)@${username.replace(/[^a-z0-9_]/g, "")}(?![\\w])`, "gi");
  return text
    .replace(pattern, "$1")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}
