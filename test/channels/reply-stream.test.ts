/**
 * The reply stream's pace on a fake clock and a recording surface: first show at once,
 * then at most one per interval and only for useful growth, the latest text on the
 * trailing edge, 429 pauses, keep-alive, taken-back answers, and failures that never
 * reach the turn.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { DeliveryError, type PreviewSurface } from "../../src/channels/chat-platform.js";
import { createReplyStream, type StreamTimers } from "../../src/channels/reply-stream.js";

const INTERVAL = 1_000;
const logger = pino({ level: "silent" });

/** A clock that only moves when the test says; timers fire in order as it passes them. */
function fakeClock() {
  let now = 0;
  let nextId = 0;
  const pending = new Map<number, { at: number; callback: () => void }>();
  const settle = async () => {
    for (let round = 0; round < 5; round += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const timers: StreamTimers = {
    now: () => now,
    setTimeout(callback, ms) {
      nextId += 1;
      pending.set(nextId, { at: now + ms, callback });
      return nextId;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
  };
  return {
    timers,
    now: () => now,
    timersPending: () => pending.size,
    settle,
    /** Moves the clock by `ms`, firing the timers it passes (and letting their shows settle). */
    async advance(ms: number) {
      const end = now + ms;
      await settle();
      for (;;) {
        const due = [...pending.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        pending.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].callback();
        await settle();
      }
      now = end;
      await settle();
    },
  };
}

type Show = { at: number; text: string; kind: "answer" | "status" };

/** A surface that records its shows; `next` decides how the next show ends (resolve, fail, hang). */
function fakeSurface(
  clock: { now(): number },
  settings: { minFirstChars?: number; keepAliveMs?: number; refAfterFirstShow?: string } = {},
) {
  const shows: Show[] = [];
  const outcomes: (() => Promise<void>)[] = [];
  let ref: string | undefined;
  const surface: PreviewSurface = {
    async show(text, kind) {
      shows.push({ at: clock.now(), text, kind });
      const outcome = outcomes.shift();
      if (outcome) await outcome();
      if (settings.refAfterFirstShow) ref = settings.refAfterFirstShow;
    },
    get ref() {
      return ref;
    },
    keepAliveMs: settings.keepAliveMs,
    minFirstChars: settings.minFirstChars ?? 0,
  };
  return {
    surface,
    shows,
    texts: () => shows.map((show) => show.text),
    /** The next show ends this way. */
    next: (outcome: () => Promise<void>) => void outcomes.push(outcome),
  };
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(" ");

describe("reply stream", () => {
  it("shows the first text at once, then at most once per interval, and only when the text grew by enough", async () => {
    const clock = fakeClock();
    const { surface, shows, texts } = fakeSurface(clock);
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.answer("Hello");
    await clock.settle();
    expect(shows).toEqual([{ at: 0, text: "Hello", kind: "answer" }]);
    // Growth within the interval waits; the latest text goes out when the interval allows (trailing edge).
    await clock.advance(100);
    stream.answer("Hello there, this is a longer answer");
    await clock.advance(100);
    stream.answer("Hello there, this is a longer answer that keeps growing");
    await clock.advance(799);
    expect(texts()).toEqual(["Hello"]);
    await clock.advance(1);
    expect(shows.at(-1)).toEqual({
      at: 1_000,
      text: "Hello there, this is a longer answer that keeps growing",
      kind: "answer",
    });
    // A few characters more are not worth a show within the next interval…
    stream.answer("Hello there, this is a longer answer that keeps growing, ok");
    await clock.advance(1_500);
    expect(shows).toHaveLength(2);
    // …a new line is.
    stream.answer("Hello there, this is a longer answer that keeps growing, ok\nNext");
    await clock.settle();
    expect(shows.at(-1)).toMatchObject({
      at: 2_500,
      text: "Hello there, this is a longer answer that keeps growing, ok\nNext",
    });
    // Every gap between shows is at least the interval.
    for (let index = 1; index < shows.length; index += 1)
      expect((shows[index]?.at ?? 0) - (shows[index - 1]?.at ?? 0)).toBeGreaterThanOrEqual(INTERVAL);
    expect(await stream.close()).toBeUndefined();
  });

  it("shows a small change anyway once the model paused for two intervals", async () => {
    const clock = fakeClock();
    const { surface, texts } = fakeSurface(clock);
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.answer("The answer is");
    await clock.settle();
    stream.answer("The answer is 42.");
    await clock.advance(1_999);
    expect(texts()).toEqual(["The answer is"]);
    await clock.advance(1);
    expect(texts()).toEqual(["The answer is", "The answer is 42."]);
    await stream.close();
  });

  it("a message edited in place waits for enough characters, and shows a status line only once the turn ran an interval", async () => {
    const clock = fakeClock();
    const { surface, shows } = fakeSurface(clock, { minFirstChars: 24 });
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.status("Searching the web…");
    await clock.advance(300);
    // A tool that finishes quickly leaves no status message behind.
    stream.answer("Short");
    await clock.advance(2_000);
    expect(shows).toEqual([]);
    stream.answer("Short, and now long enough to show");
    await clock.settle();
    expect(shows).toEqual([{ at: 2_300, text: "Short, and now long enough to show", kind: "answer" }]);
    await stream.close();

    const slow = fakeClock();
    const second = fakeSurface(slow, { minFirstChars: 24 });
    const slowStream = createReplyStream({
      surface: second.surface,
      intervalMs: INTERVAL,
      logger,
      timers: slow.timers,
    });
    slowStream.status("Searching the web…");
    await slow.advance(999);
    expect(second.shows).toEqual([]);
    await slow.advance(1);
    expect(second.shows).toEqual([{ at: 1_000, text: "Searching the web…", kind: "status" }]);
    // The answer replaces the status (a change of kind) after the interval, however short it is.
    slowStream.answer("Yes.");
    await slow.advance(1_000);
    expect(second.shows.at(-1)).toEqual({ at: 2_000, text: "Yes.", kind: "answer" });
    await slowStream.close();
  });

  it("a draft shows a status at once, and the answer replaces it after the interval", async () => {
    const clock = fakeClock();
    const { surface, shows } = fakeSurface(clock);
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.status("Running web_search…");
    await clock.settle();
    stream.answer("Found it");
    await clock.advance(1_000);
    expect(shows).toEqual([
      { at: 0, text: "Running web_search…", kind: "status" },
      { at: 1_000, text: "Found it", kind: "answer" },
    ]);
    await stream.close();
  });

  it("a taken-back answer is shown no longer: nothing goes out until the status or the new answer", async () => {
    const clock = fakeClock();
    const { surface, texts } = fakeSurface(clock, { keepAliveMs: 20_000 });
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.answer("Let me look that up for you first");
    await clock.settle();
    stream.answer("");
    await clock.advance(30_000);
    expect(texts()).toEqual(["Let me look that up for you first"]);
    stream.status("Running fetch…");
    await clock.settle();
    stream.answer("It is sunny");
    await clock.advance(1_000);
    expect(texts()).toEqual(["Let me look that up for you first", "Running fetch…", "It is sunny"]);
    await stream.close();
  });

  it("a 429 pauses the shows for as long as the platform asked, and the latest text still goes out", async () => {
    const clock = fakeClock();
    const { surface, shows, next } = fakeSurface(clock);
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.answer("First words of the answer");
    await clock.settle();
    next(async () => {
      throw new DeliveryError("Telegram editMessageText: 429 Too Many Requests", true, 5_000);
    });
    stream.answer(`First words of the answer ${words(10)}`);
    await clock.advance(1_000);
    expect(shows).toHaveLength(2);
    stream.answer(`First words of the answer ${words(20)}`);
    await clock.advance(4_999);
    expect(shows).toHaveLength(2);
    await clock.advance(1);
    expect(shows.at(-1)).toEqual({ at: 6_000, text: `First words of the answer ${words(20)}`, kind: "answer" });
    await stream.close();
  });

  it("shows a draft again every keepAliveMs while nothing new comes", async () => {
    const clock = fakeClock();
    const { surface, shows } = fakeSurface(clock, { keepAliveMs: 20_000 });
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    stream.status("");
    await clock.advance(45_000);
    expect(shows).toEqual([
      { at: 0, text: "", kind: "status" },
      { at: 20_000, text: "", kind: "status" },
      { at: 40_000, text: "", kind: "status" },
    ]);
    await stream.close();
    expect(clock.timersPending()).toBe(0);
    await clock.advance(60_000);
    expect(shows).toHaveLength(3);
  });

  it("never throws into the turn: a retryable failure is tried again after the interval, a final one ends the previews", async () => {
    const clock = fakeClock();
    const { surface, shows, next } = fakeSurface(clock);
    const stream = createReplyStream({ surface, intervalMs: INTERVAL, logger, timers: clock.timers });
    next(async () => {
      throw new DeliveryError("Telegram unreachable", true);
    });
    stream.answer("Hello");
    await clock.advance(999);
    expect(shows).toHaveLength(1);
    await clock.advance(1);
    expect(shows.map((show) => show.at)).toEqual([0, 1_000]);
    next(async () => {
      throw new DeliveryError("Telegram editMessageText: 400 Bad Request: message to edit not found", false);
    });
    stream.answer(`Hello ${words(20)}`);
    await clock.advance(1_000);
    expect(shows).toHaveLength(3);
    stream.answer(`Hello ${words(40)}`);
    await clock.advance(10_000);
    expect(shows).toHaveLength(3);
    await expect(stream.close()).resolves.toBeUndefined();

    const other = fakeClock();
    const broken = fakeSurface(other);
    broken.next(async () => {
      throw new Error("a bug in the surface");
    });
    const brokenStream = createReplyStream({
      surface: broken.surface,
      intervalMs: INTERVAL,
      logger,
      timers: other.timers,
    });
    expect(() => brokenStream.answer("Hi")).not.toThrow();
    await other.advance(5_000);
    expect(broken.shows).toHaveLength(1);
    await brokenStream.close();
  });

  it("close waits for the show in flight and for the ref to be remembered, returns the ref, and shows nothing after", async () => {
    const clock = fakeClock();
    const { surface, shows, next } = fakeSurface(clock, { minFirstChars: 0, refAfterFirstShow: "-900:501" });
    const remembered: string[] = [];
    let finishShow = () => undefined as void;
    let finishSave = () => undefined as void;
    next(() => new Promise<void>((resolve) => (finishShow = resolve)));
    const stream = createReplyStream({
      surface,
      intervalMs: INTERVAL,
      logger,
      timers: clock.timers,
      onRef: (ref) =>
        new Promise<void>((resolve) => {
          remembered.push(ref);
          finishSave = resolve;
        }),
    });
    stream.answer("The first words");
    await clock.settle();
    stream.answer(`The first words ${words(30)}`);
    let closed: { ref: string | undefined } | undefined;
    const closing = stream.close().then((ref) => (closed = { ref }));
    await clock.advance(5_000);
    expect(closed).toBeUndefined();
    finishShow();
    await clock.settle();
    expect(remembered).toEqual(["-900:501"]);
    expect(closed).toBeUndefined();
    finishSave();
    await closing;
    expect(closed).toEqual({ ref: "-900:501" });
    stream.answer(`The first words ${words(60)}`);
    await clock.advance(5_000);
    expect(shows).toHaveLength(1);
  });

  it("tells of the ref once, when it first appears", async () => {
    const clock = fakeClock();
    const { surface } = fakeSurface(clock, { refAfterFirstShow: "-900:77" });
    const remembered: string[] = [];
    const stream = createReplyStream({
      surface,
      intervalMs: INTERVAL,
      logger,
      timers: clock.timers,
      onRef: (ref) => void remembered.push(ref),
    });
    stream.answer("One");
    await clock.settle();
    for (let step = 1; step <= 5; step += 1) {
      stream.answer(`One ${words(step * 10)}`);
      await clock.advance(1_000);
    }
    expect(await stream.close()).toBe("-900:77");
    expect(remembered).toEqual(["-900:77"]);
  });
});
