/**
 * The console channel. On a TTY: an interactive REPL (readline with history, a status
 * line while the bot works, Ctrl-C cancels the answer being prepared, Ctrl-C at the
 * prompt or Ctrl-D quits). Otherwise: one message per input line, each reply printed, exit at
 * end of input, so it can be scripted (`echo hi | laoding chat`). Lines are answered in
 * order: the orchestrator serialises a session anyway.
 */
import { createInterface } from "node:readline";
import type { Channel, MessageHandler } from "./channel.js";
import { createStatusLine } from "./console-status.js";
import { overCap, type MessageCap } from "./message-cap.js";

export type ConsoleChannelOptions = {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  agentId: string;
  /** Show a prompt and keep history (interactive). */
  interactive: boolean;
  chatId?: string;
  userName?: string;
  /** MESSAGE_MAX_CHARS and its reply in BOT_LOCALE (messageCap()). */
  messageCap: MessageCap;
};

export const CONSOLE_CHAT_ID = "local";

export function createConsoleChannel(options: ConsoleChannelOptions): Channel {
  const cap = options.messageCap;
  let closeInput: (() => void) | undefined;
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
      const status = options.interactive ? createStatusLine(options.output) : undefined;
      let closed = false;
      let turn: AbortController | undefined;
      readline.on("close", () => (closed = true));
      closeInput = () => {
        if (!closed) readline.close();
        // A closed readline leaves stdin flowing on a terminal: release it so the process can end.
        if ("pause" in options.input) options.input.pause();
      };
      // On a terminal Ctrl-C reaches readline, not the process. During a turn the first one
      // cancels the turn; a second one, or one at the prompt, quits.
      readline.on("SIGINT", () => {
        if (turn && !turn.signal.aborted) {
          turn.abort();
          status?.show({ state: "cancelling" });
          return;
        }
        turn?.abort();
        status?.clear();
        options.output.write("\n");
        closeInput?.();
      });
      // Never prompt on a closed interface: that would resume reading stdin behind our back.
      const ask = () => options.interactive && !closed && readline.prompt();
      let counter = 0;
      ask();
      for await (const line of readline) {
        const text = line.trim();
        if (text === "") {
          ask();
          continue;
        }
        if (options.interactive && (text === "/exit" || text === "/quit")) break;
        const tooLong = overCap(text, cap);
        if (tooLong !== undefined) {
          options.output.write(options.interactive ? `bot> ${cap.reply(tooLong)}\n\n` : `${cap.reply(tooLong)}\n`);
          ask();
          continue;
        }
        counter += 1;
        const control = new AbortController();
        turn = control;
        status?.show({ state: "waiting" });
        try {
          const reply = await handler(
            {
              channel: "console",
              chatId: options.chatId ?? CONSOLE_CHAT_ID,
              userId: options.userName ?? "console",
              messageId: `${Date.now()}-${counter}`,
              text,
              agentId: options.agentId,
              isOperator: true,
              ...(options.userName ? { userName: options.userName } : {}),
            },
            { signal: control.signal, onProgress: (progress) => control.signal.aborted || status?.show(progress) },
          );
          status?.clear();
          if (reply !== undefined) options.output.write(options.interactive ? `bot> ${reply}\n\n` : `${reply}\n`);
        } catch (error) {
          status?.clear();
          options.output.write(`error: ${(error as Error).message}\n`);
        } finally {
          turn = undefined;
        }
        if (closed && options.interactive) break;
        ask();
      }
      closeInput();
    },
    async stop() {
      closeInput?.();
    },
  };
}
