/**
 * The console channel. On a TTY: an interactive REPL (readline with history, a status
 * line while the bot works, Ctrl-C cancels the answer being prepared, Ctrl-C at the
 * prompt or Ctrl-D quits). Otherwise: one message per input line, each reply printed, exit at
 * end of input, so it can be scripted (`echo hi | laoding chat`). Lines are answered in
 * order: the orchestrator serialises a session anyway.
 */
import { createInterface } from "node:readline";
import { text, type Locale } from "../locale/texts.js";
import type { Channel, MessageHandler } from "./channel.js";
import { createStatusLine, type StatusOutput } from "./console-status.js";
import { overCap, type MessageCap } from "./message-cap.js";

export type ConsoleChannelOptions = {
  input: NodeJS.ReadableStream;
  /** On a terminal: its width sizes the status line. */
  output: StatusOutput;
  agentId: string;
  /** Show a prompt and keep history (interactive). */
  interactive: boolean;
  chatId?: string;
  userName?: string;
  /** MESSAGE_MAX_CHARS and its reply in BOT_LOCALE (messageCap()). */
  messageCap: MessageCap;
  /**
   * BOT_LOCALE, for the console's own words (prompt, status line, notices). Optional
   * only until `laoding chat` passes it; then English.
   */
  locale?: Locale;
};

export const CONSOLE_CHAT_ID = "local";

export function createConsoleChannel(options: ConsoleChannelOptions): Channel {
  const cap = options.messageCap;
  const locale = options.locale ?? "en";
  // Replies printed as a conversation on a terminal; bare lines for a script.
  const reply = (words: string) => (options.interactive ? `${text(locale, "consoleReply")}${words}\n\n` : `${words}\n`);
  let closeInput: (() => void) | undefined;
  return {
    name: "console",
    async run(handler: MessageHandler) {
      const readline = createInterface({
        input: options.input,
        output: options.interactive ? options.output : undefined,
        terminal: options.interactive,
        historySize: options.interactive ? 500 : 0,
        prompt: text(locale, "consolePrompt"),
      });
      const status = options.interactive ? createStatusLine(options.output, { locale }) : undefined;
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
        const typed = line.trim();
        if (typed === "") {
          ask();
          continue;
        }
        if (options.interactive && (typed === "/exit" || typed === "/quit")) break;
        const tooLong = overCap(typed, cap);
        if (tooLong !== undefined) {
          options.output.write(reply(cap.reply(tooLong)));
          ask();
          continue;
        }
        counter += 1;
        const control = new AbortController();
        turn = control;
        status?.show({ state: "waiting" });
        try {
          const answer = await handler(
            {
              channel: "console",
              chatId: options.chatId ?? CONSOLE_CHAT_ID,
              userId: options.userName ?? "console",
              messageId: `${Date.now()}-${counter}`,
              text: typed,
              agentId: options.agentId,
              isOperator: true,
              ...(options.userName ? { userName: options.userName } : {}),
            },
            { signal: control.signal, onProgress: (progress) => control.signal.aborted || status?.show(progress) },
          );
          status?.clear();
          if (answer !== undefined) options.output.write(reply(answer));
        } catch (error) {
          status?.clear();
          options.output.write(`${text(locale, "consoleError", { message: (error as Error).message })}\n`);
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
