/**
 * One turn's reply on an interactive terminal: the status line while the bot works, the
 * answer printed as it grows (when replies stream), and the final answer.
 *
 * The status line and the answer never share a row: the status is erased (and its timer
 * stopped) before the first text of the answer, and comes back only after the answer's
 * row is ended, when a tool step, a retry or a cancel begins. While text streams, other
 * progress (routing, thinking) is not drawn.
 *
 * The answer is Markdown shown plainly and wrapped to the width (console-markdown.ts,
 * console-wrap.ts), the same whether it streamed or came whole. Only new text is ever
 * printed. When the turn ends with the text already printed, the rest (the last word, a
 * cut-off note) is added; a final answer that is not a continuation of what was printed
 * (a partial answer, an error, a preview the model's later text revised) is printed in
 * full below it: what the person reads last is always the final answer.
 */
import { text, type Locale } from "../locale/texts.js";
import { plainMarkdown } from "./console-markdown.js";
import type { StatusLine, StatusOutput, StatusProgress } from "./console-status.js";
import { createWrapWriter, type WrapWriter } from "./console-wrap.js";
import { displayWidth } from "./display-width.js";

/** When the output cannot say its width (not a terminal): the classic one. */
const DEFAULT_COLUMNS = 80;

export type ConsoleReply = {
  /** What the bot is doing (TurnControl.onProgress, and a cancel under way). */
  progress(progress: StatusProgress): void;
  /** The answer so far (TurnControl.onAnswer): the whole text each time; "" takes back what was shown. */
  answer(text: string): void;
  /** The turn's answer; undefined: nothing to say (a duplicate). */
  finish(answer: string | undefined): void;
  /** The turn failed: this line instead of an answer. */
  fail(line: string): void;
};

export type ConsoleReplyOptions = { output: StatusOutput; locale: Locale; status: StatusLine };

/** The answer being printed: what of it is on the screen, and whether the text still continues it. */
type Shown = { writer: WrapWriter; printed: string; revised: boolean };

export function createConsoleReply(options: ConsoleReplyOptions): ConsoleReply {
  const { output, status } = options;
  let last: StatusProgress = { state: "waiting" };
  let shown: Shown | undefined;
  /** Ends the answer's row (and, for the final answer, leaves a blank line). */
  const close = (blank: boolean) => {
    if (!shown) return;
    output.write(`${shown.writer.atRowStart() ? "" : "\n"}${blank ? "\n" : ""}`);
    shown = undefined;
  };
  return {
    progress(progress) {
      last = progress;
      if (shown) {
        if (progress.state !== "tool" && progress.state !== "retrying" && progress.state !== "cancelling") return;
        close(false);
      }
      status.show(progress);
    },
    answer(answer) {
      if (answer === "") {
        if (!shown) return;
        close(false);
        status.show(last);
        return;
      }
      const plain = plainMarkdown(answer.trim(), true);
      if (!shown) {
        if (plain === "") return;
        status.clear();
        shown = { writer: startReply(output, options.locale), printed: "", revised: false };
      }
      if (shown.revised) return;
      if (!plain.startsWith(shown.printed)) {
        // Printed text cannot be taken back: the final answer will be printed whole.
        shown.revised = true;
        return;
      }
      shown.writer.append(plain.slice(shown.printed.length));
      shown.printed = plain;
    },
    finish(answer) {
      status.clear();
      if (answer === undefined) return close(false);
      const plain = plainMarkdown(answer.trim());
      if (shown && !shown.revised && plain.startsWith(shown.printed)) {
        shown.writer.append(plain.slice(shown.printed.length));
        return close(true);
      }
      close(false);
      printReply(output, options.locale, answer);
    },
    fail(line) {
      status.clear();
      close(false);
      output.write(`${line}\n`);
    },
  };
}

/** A whole reply on a terminal: the reply prefix, the text shown plainly and wrapped, a blank line. */
export function printReply(output: StatusOutput, locale: Locale, answer: string): void {
  const writer = startReply(output, locale);
  writer.append(plainMarkdown(answer.trim()));
  output.write(writer.atRowStart() ? "\n" : "\n\n");
}

/** Prints the reply prefix and returns the writer for the text after it. */
function startReply(output: StatusOutput, locale: Locale): WrapWriter {
  const prefix = text(locale, "consoleReply");
  output.write(prefix);
  return createWrapWriter({
    write: (chunk) => output.write(chunk),
    columns: () => (output.columns && output.columns > 0 ? output.columns : DEFAULT_COLUMNS),
    startColumn: displayWidth(prefix),
  });
}
