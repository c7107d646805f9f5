/**
 * The console channel. On a TTY: an interactive REPL (readline with history, Ctrl-C or
 * Ctrl-D to quit). Otherwise: one message per input line, each reply printed, exit at
 * end of input, so it can be scripted (`echo hi | laoding chat`). Lines are answered in
 * order: the orchestrator serialises a session anyway.
 */
import { createInterface } from "node:readline";
import type { Channel, MessageHandler } from "./channel.js";

export type ConsoleChannelOptions = {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  agentId: string;
  /** Show a prompt and keep history (interactive). */
  interactive: boolean;
  chatId?: string;
  userName?: string;
};

export const CONSOLE_CHAT_ID = "local";

export function createConsoleChannel(options: ConsoleChannelOptions): Channel {
  let closeReadline: (() => void) | undefined;
  return {
    name: "console",
    async run(handler: MessageHandler) {
      const readline = createInterface({
        input: options.input,
        output: options.interactive ? options.output : undefined,
        terminal: options.interactive,
        historySize: options.interactive ? 500 : 0,
        prompt: "you> ",
      });
      closeReadline = () => readline.close();
      // On a TTY, Ctrl-C reaches readline, not the process: treat it as quit.
      readline.on("SIGINT", () => readline.close());
      let counter = 0;
      const ask = () => options.interactive && readline.prompt();
      ask();
      for await (const line of readline) {
        const text = line.trim();
        if (text === "") {
          ask();
          continue;
        }
        if (options.interactive && (text === "/exit" || text === "/quit")) break;
        counter += 1;
        try {
          const reply = await handler({
            channel: "console",
            chatId: options.chatId ?? CONSOLE_CHAT_ID,
            userId: options.userName ?? "console",
            messageId: `${Date.now()}-${counter}`,
            text,
            agentId: options.agentId,
            isOperator: true,
            ...(options.userName ? { userName: options.userName } : {}),
          });
          if (reply !== undefined) options.output.write(options.interactive ? `bot> ${reply}\n\n` : `${reply}\n`);
        } catch (error) {
          options.output.write(`error: ${(error as Error).message}\n`);
        }
        ask();
      }
      readline.close();
    },
    async stop() {
      closeReadline?.();
    },
  };
}
