/**
 * The console's status line while a turn runs: a spinner, what the bot is doing and for
 * how long, redrawn in place and erased before the answer prints. Only on a terminal;
 * piped output never sees it.
 *
 * In place means one row: `\r` returns only to the start of the row the cursor is on, so
 * a frame that wrapped would leave its first rows behind on every redraw (a long retry
 * line at 100 columns left 100 lines in 10 s). Every frame is therefore cut to one column
 * less than the terminal's width (display columns: CJK characters take two), the row is
 * erased before each frame and when the status ends, and a resize redraws at once.
 */
import { modelErrorWords, text, type Locale } from "../locale/texts.js";
import { isModelErrorKind, type ModelErrorKind } from "../llm/model-errors.js";
import type { TurnProgress } from "./channel.js";
import { fitWidth } from "./display-width.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_INTERVAL_MS = 100;
const CLEAR_LINE = "\r\x1b[2K";
/** When the output cannot say its width (not a terminal): the classic one. */
const DEFAULT_COLUMNS = 80;

export type StatusProgress = TurnProgress | { state: "waiting" } | { state: "cancelling" };

export type StatusLine = {
  /** Starts (or updates) the line. */
  show(progress: StatusProgress): void;
  /** Erases the line; the next show() starts a new one. */
  clear(): void;
};

/** A terminal output stream: `columns` and a 'resize' event when it is a TTY. */
export type StatusOutput = NodeJS.WritableStream & { columns?: number };

export function describeProgress(progress: StatusProgress, locale: Locale): string {
  switch (progress.state) {
    case "waiting":
      return text(locale, "statusWaiting");
    case "routing":
      return text(locale, "statusRouting");
    case "thinking":
      return progress.step > 1
        ? text(locale, "statusThinkingStep", { step: progress.step })
        : text(locale, "statusThinking");
    case "tool":
      return text(locale, "statusTool", { tool: progress.tool });
    case "retrying": {
      // The provider's own message (`reason`) is English detail for the log; a person
      // reads the kind of failure in words, when the model adapter says which.
      const retry = { attempt: progress.attempt, maxAttempts: progress.maxAttempts };
      const kind = retryKind(progress);
      return kind
        ? text(locale, "statusRetryingKind", { ...retry, reason: modelErrorWords(locale, kind) })
        : text(locale, "statusRetrying", retry);
    }
    case "cancelling":
      return text(locale, "statusCancelling");
  }
}

export function createStatusLine(output: StatusOutput, options: { locale: Locale; now?: () => number }): StatusLine {
  const now = options.now ?? Date.now;
  let line: string | undefined;
  let hint = "";
  let started = 0;
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    if (line === undefined) return;
    const seconds = Math.floor((now() - started) / 1000);
    const columns = output.columns && output.columns > 0 ? output.columns : DEFAULT_COLUMNS;
    // One column short of the width: writing the last column leaves some terminals
    // waiting to wrap, and the next `\r` would then act on the row below.
    output.write(
      `${CLEAR_LINE}${fitWidth(`${FRAMES[frame % FRAMES.length]} ${line}… ${seconds}s${hint}`, columns - 1)}`,
    );
    frame += 1;
  };
  return {
    show(progress) {
      if (line === undefined) {
        started = now();
        timer = setInterval(draw, FRAME_INTERVAL_MS);
        // A status line must never keep the process alive on its own.
        timer.unref();
        output.on("resize", draw);
      }
      line = oneRow(describeProgress(progress, options.locale));
      hint = progress.state === "cancelling" ? "" : `  ${text(options.locale, "statusCancelHint")}`;
      draw();
    },
    clear() {
      if (line === undefined) return;
      clearInterval(timer);
      output.off("resize", draw);
      line = undefined;
      output.write(CLEAR_LINE);
    },
  };
}

/** A tool name or a reason with a newline or a tab in it would move the cursor off the row. */
function oneRow(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ");
}

/** The failure's kind, when the model adapter passes it along with the retry. */
function retryKind(progress: TurnProgress & { state: "retrying" }): ModelErrorKind | undefined {
  const kind = (progress as { kind?: unknown }).kind;
  return isModelErrorKind(kind) ? kind : undefined;
}
