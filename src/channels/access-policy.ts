/**
 * Who the bot answers, per bot: an allowlist of user ids (`*` for everyone; no list at all
 * means everyone, and start-up warns), operators for operator commands, and the group
 * rule (answer only when mentioned or replied to, unless GROUP_POLICY=all).
 */
import type { PlatformMessage } from "./chat-platform.js";

export type AccessSettings = {
  /** Undefined: everyone (the operator was warned at start-up). */
  allowedUsers?: readonly string[];
  operators: readonly string[];
  groupPolicy: "mention" | "all";
};

/** ignore: not for the bot (a group message without a mention); refuse: say politely no. */
export type AccessDecision = "answer" | "refuse" | "ignore";

export type AccessPolicy = {
  decide(message: PlatformMessage): AccessDecision;
  isOperator(userId: string): boolean;
  /** Everyone may talk to the bot because no allowlist was set (worth a warning). */
  readonly openToEveryone: boolean;
  /** Someone may run operator commands on this bot (start-up warns when nobody can). */
  readonly hasOperators: boolean;
};

export function createAccessPolicy(settings: AccessSettings): AccessPolicy {
  const allowed = settings.allowedUsers ? new Set(settings.allowedUsers) : undefined;
  const everyone = !allowed || allowed.has("*");
  const operators = new Set(settings.operators);
  return {
    openToEveryone: allowed === undefined,
    hasOperators: operators.size > 0,
    isOperator: (userId) => operators.has(userId),
    decide(message) {
      // In a group, a message not addressed to the bot is none of its business, allowed or not.
      if (message.chatType === "group" && settings.groupPolicy === "mention" && !message.mentionedBot) return "ignore";
      if (everyone || allowed?.has(message.userId)) return "answer";
      return "refuse";
    },
  };
}

/**
 * OPERATOR_IDS entries for one channel: `telegram:123` counts on Telegram only; an id
 * without a channel prefix counts everywhere.
 */
export function operatorsFor(channel: string, entries: readonly string[]): string[] {
  return entries.flatMap((entry) => {
    const match = /^(console|telegram|feishu):(.+)$/.exec(entry);
    if (!match) return [entry];
    return match[1] === channel ? [match[2] as string] : [];
  });
}

/** What a user id looks like on each chat channel (the console user is always an operator). */
const USER_ID_SHAPES = {
  telegram: { pattern: /^[1-9][0-9]{0,19}$/, words: "a Telegram numeric user id, such as telegram:123456" },
  feishu: { pattern: /^ou_[A-Za-z0-9_-]{1,100}$/, words: "a Feishu open_id (ou_...), such as feishu:ou_abc123" },
} as const;

export type OperatorId = { channel: keyof typeof USER_ID_SHAPES; userId: string };

/**
 * `telegram:123456` or `feishu:ou_...` as given to `laoding operators`: the channel is
 * required (an id without one would count on every channel), and the id must look like
 * one of that channel's; otherwise the problem, in words.
 */
export function parseOperatorId(text: string): OperatorId | { problem: string } {
  const match = /^([a-z]+):(.+)$/.exec(text.trim());
  if (!match) return { problem: `"${text}" is not channel:user-id; write telegram:123456 or feishu:ou_...` };
  const [, channel, userId] = match as unknown as [string, string, string];
  if (channel === "console") return { problem: "the console user is always an operator; nothing to add" };
  if (channel !== "telegram" && channel !== "feishu")
    return { problem: `"${channel}" is not a chat channel; use telegram or feishu` };
  const shape = USER_ID_SHAPES[channel];
  if (!shape.pattern.test(userId)) return { problem: `"${userId}" is not ${shape.words}` };
  return { channel, userId };
}
