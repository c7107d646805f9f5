/** /help, /start, /new and /context: the commands every chat user has. */
import type { AgentDefinition } from "../../config/agents.js";
import { manifestLines } from "../prompt/compose-prompt.js";
import type { PromptManifest } from "../prompt/system-prompt.js";
import { text, type Locale } from "../texts.js";
import { helpLines, type ChatCommand } from "./chat-commands.js";

export function builtinCommands(options: {
  agent: (agentId: string) => AgentDefinition | undefined;
  startNewSession: (agentId: string, channel: string, chatId: string) => void | Promise<void>;
  lastPrompt: (sessionKey: string) => PromptManifest | undefined;
  operatorCommandsListed: () => boolean;
  /** Commands registered beside these, whose help lines /help shows. */
  registered: () => readonly ChatCommand[];
}): ChatCommand[] {
  const nameOf = (agentId: string) => options.agent(agentId)?.name ?? agentId;
  return [
    {
      name: "help",
      operatorOnly: false,
      run: ({ message, locale }) =>
        text(locale, "help", { name: nameOf(message.agentId) }) +
        helpLines(options.registered(), locale, false) +
        (message.isOperator && options.operatorCommandsListed()
          ? text(locale, "operatorHelp") + helpLines(options.registered(), locale, true)
          : ""),
    },
    {
      name: "start",
      operatorOnly: false,
      run: ({ message, locale }) =>
        text(locale, "start", {
          name: nameOf(message.agentId),
          description: describedIn(locale, options.agent(message.agentId)?.description),
        }).replace(/ \n/, "\n"),
    },
    {
      name: "new",
      operatorOnly: false,
      run: async ({ message, locale }) => {
        await options.startNewSession(message.agentId, message.channel, message.chatId);
        return text(locale, "newSession");
      },
    },
    {
      name: "context",
      operatorOnly: false,
      run: ({ sessionKey, locale }) => {
        const manifest = options.lastPrompt(sessionKey);
        if (!manifest) return text(locale, "noContext");
        const skills = text(locale, "contextSkills", { skills: manifest.skills.join(", ") || "-" });
        const tools = manifest.tools;
        return [
          text(locale, "contextHeader", { total: manifest.totalChars, skills }),
          ...manifestLines(manifest),
          ...(tools?.mcpUnavailable ?? []).map((server) => text(locale, "contextMcpUnavailable", server)),
          ...(tools && tools.mcpLeftOut > 0 ? [text(locale, "contextMcpLeftOut", { count: tools.mcpLeftOut })] : []),
        ].join("\n");
      },
    },
  ];
}

/**
 * The operator's description of the agent, when it is written in the bot's language: a
 * Chinese greeting with an English sentence inside reads as a mistake.
 */
function describedIn(locale: Locale, description: string | undefined): string {
  if (!description) return "";
  const chinese = /[\u4e00-\u9fff]/.test(description);
  return (locale === "zh") === chinese ? description : "";
}
