/**
 * The console channel. On a TTY: an interactive REPL (readline with history, a status
 * line while the bot works, Ctrl-C cancels the answer being prepared, Ctrl-C at the
 * prompt or Ctrl-D quits). Otherwise: one message per input line, each reply printed, exit at
 * end of input, so it can be scripted (`echo hi | laoding chat`). Lines are answered in
 * order: the orchestrator serialises a session anyway.
 *
 * On a terminal the answer is printed as the model writes it (`stream`, on unless
 * STREAM_REPLIES turns it off for the console), Markdown shown plainly and wrapped to the
 * width, and a streamed reply looks the same as one printed whole (console-reply.ts).
 * Piped output never streams: one final reply per input line, exactly as the bot stored it.
 */
import { createInterface } from "node:readline";
import { text, type Locale } from "../locale/texts.js";
import type { Channel, MessageHandler, TurnControl } from "./channel.js";
import { createConsoleReply, printReply, type ConsoleReply } from "./console-reply.js";
import { createStatusLine, type StatusOutput } from "./console-status.js";
import { overCap, type MessageCap } from "./message-cap.js";

export type ConsoleChannelOptions = {
  input: NodeJS.ReadableStream;
  /** On a terminal: its width sizes the status line and wraps the replies. */
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
  /** Print the answer as it is written (when interactive and the output is a terminal). Default on (STREAM_REPLIES). */
  stream?: boolean;
};

export const CONSOLE_CHAT_ID = "local";

export function createConsoleChannel(options: ConsoleChannelOptions): Channel {
  const cap = options.messageCap;
  const locale = options.locale ?? "en";
  // Only onto a terminal: `laoding chat > file` at a terminal still gets whole replies.
  const stream =
    options.interactive && (options.stream ?? true) && (options.output as { isTTY?: boolean }).isTTY === true;
  // Replies printed as a conversation on a terminal; bare lines for a script.
  const reply = (words: string) =>
    options.interactive ? printReply(options.output, locale, words) : options.output.write(`${words}\n`);
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
      let shown: ConsoleReply | undefined;
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
          shown?.progress({ state: "cancelling" });
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
          reply(cap.reply(tooLong));
          ask();
          continue;
        }
        counter += 1;
        const control = new AbortController();
        turn = control;
        shown = status ? createConsoleReply({ output: options.output, locale, status }) : undefined;
        shown?.progress({ state: "waiting" });
        const steer: TurnControl = {
          signal: control.signal,
          onProgress: (progress) => control.signal.aborted || shown?.progress(progress),
          ...(stream ? { onAnswer: (answer: string) => control.signal.aborted || shown?.answer(answer) } : {}),
        };
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
            steer,
          );
          if (shown) shown.finish(answer);
          else if (answer !== undefined) reply(answer);
        } catch (error) {
          const line = text(locale, "consoleError", { message: (error as Error).message });
          if (shown) shown.fail(line);
          else options.output.write(`${line}\n`);
        } finally {
          turn = undefined;
          shown = undefined;
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
