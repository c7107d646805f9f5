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
};

export function createAccessPolicy(settings: AccessSettings): AccessPolicy {
  const allowed = settings.allowedUsers ? new Set(settings.allowedUsers) : undefined;
  const everyone = !allowed || allowed.has("*");
  const operators = new Set(settings.operators);
  return {
    openToEveryone: allowed === undefined,
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
