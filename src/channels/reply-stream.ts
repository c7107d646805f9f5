/**
 * One turn's live preview (STREAM_REPLIES): the answer as it grows, and a short status
 * line while tools run, shown on the platform's PreviewSurface at a pace the platform
 * accepts. The first show goes out at once (a message edited in place waits for a few
 * characters of answer, and shows a status line only once the turn has run an interval);
 * after it, at most one show per interval, and only when the text grew by a useful amount
 * (MIN_GROWTH_CHARS or a new line), was rewritten, or changed kind (status ↔ answer). The
 * latest text waiting behind the interval goes out when the interval allows; a smaller
 * change after a while. A 429 pauses the shows for as long as the platform asked, a draft
 * is shown again every keepAliveMs, and no failure ever reaches the turn: the final
 * answer is the outbox's, and the preview is only a preview.
 */
import type { Logger } from "pino";
import { DeliveryError, type PreviewSurface } from "./chat-platform.js";

/** STREAM_EDIT_INTERVAL_MS's default. */
export const DEFAULT_STREAM_INTERVAL_MS = 1_000;
/** A preview is shown again when the answer grew by at least this many characters (or by a new line). */
export const MIN_GROWTH_CHARS = 20;
/** A smaller change is shown once no show happened for this many intervals (the model paused mid-sentence). */
const STALE_INTERVALS = 2;

/** The clock and timers of a stream, injected so its tests are deterministic. */
export type StreamTimers = {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

export const systemTimers: StreamTimers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export type ReplyStreamOptions = {
  surface: PreviewSurface;
  /** STREAM_EDIT_INTERVAL_MS: the least time between the end of one show and the start of the next. */
  intervalMs: number;
  logger: Pick<Logger, "warn" | "debug">;
  /** Hears of the surface's ref when it appears (and if it ever changes); close() waits for it. */
  onRef?: (ref: string) => void | Promise<void>;
  timers?: StreamTimers;
};

export type ReplyStream = {
  /** The whole answer so far; "" takes back what was shown (nothing is shown until new text or a status). */
  answer(text: string): void;
  /** A short status line (a tool runs), replaced by the answer when it comes. */
  status(text: string): void;
  /** Stops showing, waits for a show in flight (and the ref's callback), and returns the surface's ref. */
  close(): Promise<string | undefined>;
};

type Content = { text: string; kind: "answer" | "status" };

export function createReplyStream(options: ReplyStreamOptions): ReplyStream {
  const { surface, intervalMs, logger } = options;
  const timers = options.timers ?? systemTimers;
  const startedAt = timers.now();
  /** What should be shown; undefined: nothing (yet, or the answer was taken back). */
  let latest: Content | undefined;
  /** What the surface shows. */
  let shown: Content | undefined;
  /** When the last show (successful or not) ended: the interval counts from there. */
  let lastEndedAt: number | undefined;
  let pausedUntil = 0;
  let inFlight: Promise<void> | undefined;
  let timer: { handle: unknown; at: number } | undefined;
  let closed = false;
  let broken = false;
  let reportedRef: string | undefined;
  let refSaved: Promise<void> = Promise.resolve();

  const same = (a: Content, b: Content | undefined) => b !== undefined && a.text === b.text && a.kind === b.kind;

  /** Whether `next` is worth a show now (rather than after STALE_INTERVALS). */
  function worthShowing(next: Content): boolean {
    if (!shown) return next.kind === "status" || next.text.length >= surface.minFirstChars;
    if (next.kind !== shown.kind) return true;
    if (!next.text.startsWith(shown.text)) return true;
    const added = next.text.slice(shown.text.length);
    return added.length >= MIN_GROWTH_CHARS || added.includes("\n");
  }

  /** The next show: when, and what; undefined when there is nothing to show until new text comes. */
  function nextShow(): { at: number; content: Content } | undefined {
    const candidates: { at: number; content: Content }[] = [];
    if (latest && !same(latest, shown)) {
      if (worthShowing(latest)) {
        const first =
          latest.kind === "status" && surface.minFirstChars > 0 && shown === undefined ? startedAt + intervalMs : 0;
        candidates.push({
          at: Math.max(first, lastEndedAt === undefined ? 0 : lastEndedAt + intervalMs),
          content: latest,
        });
      } else if (shown && lastEndedAt !== undefined) {
        candidates.push({ at: lastEndedAt + STALE_INTERVALS * intervalMs, content: latest });
      }
    }
    const keepAliveMs = surface.keepAliveMs;
    if (keepAliveMs !== undefined && shown && latest && lastEndedAt !== undefined)
      candidates.push({ at: lastEndedAt + keepAliveMs, content: latest });
    const next = candidates.sort((a, b) => a.at - b.at)[0];
    return next && { at: Math.max(next.at, pausedUntil), content: next.content };
  }

  function pump(): void {
    if (closed || broken || inFlight) return;
    const plan = nextShow();
    if (!plan) return cancelTimer();
    const now = timers.now();
    if (plan.at <= now) {
      cancelTimer();
      return show(plan.content);
    }
    if (timer?.at === plan.at) return;
    cancelTimer();
    // Checked again when it fires: the plan may have changed, and a timer may fire a little early.
    timer = { at: plan.at, handle: timers.setTimeout(() => ((timer = undefined), pump()), plan.at - now) };
  }

  function cancelTimer(): void {
    if (timer) timers.clearTimeout(timer.handle);
    timer = undefined;
  }

  function show(content: Content): void {
    inFlight = (async () => {
      try {
        await surface.show(content.text, content.kind);
        shown = content;
      } catch (error) {
        failed(error);
      } finally {
        lastEndedAt = timers.now();
        reportRef();
      }
    })().finally(() => {
      inFlight = undefined;
      pump();
    });
  }

  function failed(error: unknown): void {
    if (error instanceof DeliveryError && error.retryable) {
      if (error.retryAfterMs !== undefined) pausedUntil = timers.now() + error.retryAfterMs;
      logger.debug(
        { err: error, pauseMs: error.retryAfterMs },
        "a live preview could not be shown; the stream slows down and goes on",
      );
      return;
    }
    // Refused for good (a preview deleted, a chat gone): this turn shows no more; its answer still goes out.
    broken = true;
    logger.warn({ err: error }, "the live preview stopped; the answer is sent when the turn ends");
  }

  function reportRef(): void {
    const ref = surface.ref;
    if (ref === undefined || ref === reportedRef || !options.onRef) return;
    reportedRef = ref;
    const onRef = options.onRef;
    refSaved = refSaved
      .then(() => onRef(ref))
      .catch((error: unknown) => logger.warn({ err: error, ref }, "could not remember a live preview"));
  }

  return {
    answer(text) {
      if (closed) return;
      latest = text === "" ? undefined : { text, kind: "answer" };
      pump();
    },
    status(text) {
      if (closed) return;
      latest = { text, kind: "status" };
      pump();
    },
    async close() {
      closed = true;
      cancelTimer();
      await inFlight;
      reportRef();
      await refSaved;
      return surface.ref;
    },
  };
}
