/**
 * The console's status line while a turn runs: a spinner, what the bot is doing and for
 * how long, redrawn in place and erased before the answer prints. Only on a terminal;
 * piped output never sees it.
 */
import type { TurnProgress } from "./channel.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const CLEAR_LINE = "\r\x1b[2K";

export type StatusLine = {
  /** Starts (or updates) the line. */
  show(progress: TurnProgress | { state: "waiting" } | { state: "cancelling" }): void;
  /** Erases the line; the next show() starts a new one. */
  clear(): void;
};

export function describeProgress(progress: TurnProgress | { state: "waiting" } | { state: "cancelling" }): string {
  switch (progress.state) {
    case "waiting":
      return "waiting for the model";
    case "routing":
      return "choosing skills";
    case "thinking":
      return progress.step > 1 ? `thinking (step ${progress.step})` : "thinking";
    case "tool":
      return `running ${progress.tool}`;
    case "retrying":
      return `the model failed (${shorten(progress.reason)}); retrying, attempt ${progress.attempt} of ${progress.maxAttempts}`;
    case "cancelling":
      return "cancelling (Ctrl-C again to quit)";
  }
}

export function createStatusLine(output: NodeJS.WritableStream, now: () => number = Date.now): StatusLine {
  let text: string | undefined;
  let hint = "";
  let started = 0;
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    if (text === undefined) return;
    const seconds = Math.floor((now() - started) / 1000);
    output.write(`${CLEAR_LINE}${FRAMES[frame % FRAMES.length]} ${text}… ${seconds}s${hint}`);
    frame += 1;
  };
  return {
    show(progress) {
      if (text === undefined) {
        started = now();
        timer = setInterval(draw, 100);
        // A status line must never keep the process alive on its own.
        timer.unref();
      }
      text = describeProgress(progress);
      hint = progress.state === "cancelling" ? "" : "  (Ctrl-C to cancel)";
      draw();
    },
    clear() {
      if (text === undefined) return;
      clearInterval(timer);
      text = undefined;
      output.write(CLEAR_LINE);
    },
  };
}

function shorten(reason: string): string {
  return reason.length > 60 ? `${reason.slice(0, 57)}...` : reason;
}
