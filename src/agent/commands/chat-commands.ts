/**
 * Slash commands answered without the model. A command is `/name` (optionally
 * `/name@botname`) at the start of the message. Operator commands refuse other users.
 * Later features register more commands into the same table.
 */
import type { IncomingMessage } from "../../channels/channel.js";
import { text, type Locale, type TextKey } from "../texts.js";

export type CommandContext = {
  message: IncomingMessage;
  args: string;
  locale: Locale;
  sessionKey: string;
};

export type ChatCommand = {
  name: string;
  operatorOnly: boolean;
  /** Its line in /help (operators' commands under the operator block), for commands registered by later features. */
  help?: TextKey;
  run(context: CommandContext): Promise<string> | string;
};

/** The /help lines of registered commands with one: users' commands, or operators' when `operator`. */
export function helpLines(commands: readonly ChatCommand[], locale: Locale, operator: boolean): string {
  return commands
    .filter((command) => command.help && command.operatorOnly === operator)
    .flatMap((command) => (command.help ? [`\n${text(locale, command.help)}`] : []))
    .join("");
}

export function parseCommand(input: string): { name: string; args: string } | undefined {
  const match = /^\/([A-Za-z0-9_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(input.trim());
  if (!match) return undefined;
  return { name: (match[1] as string).toLowerCase(), args: (match[2] ?? "").trim() };
}

export function runCommand(
  commands: ReadonlyMap<string, ChatCommand>,
  parsed: { name: string; args: string },
  context: Omit<CommandContext, "args">,
): Promise<string> | string {
  const command = commands.get(parsed.name);
  if (!command) return text(context.locale, "unknownCommand", { command: `/${parsed.name}` });
  if (command.operatorOnly && !context.message.isOperator) {
    // The refused user learns their own id and the exact command that admits them (docs/channels.md, "Operators").
    const userId = `${context.message.channel}:${context.message.userId}`;
    return text(context.locale, "operatorOnly", {
      command: `/${parsed.name}`,
      userId,
      agentId: context.message.agentId,
    });
  }
  return command.run({ ...context, args: parsed.args });
}
