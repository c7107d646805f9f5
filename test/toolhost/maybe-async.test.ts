import { describe, expect, it } from "vitest";
import { andFinally, andThen, mapMaybe } from "../../src/toolhost/maybe-async.js";

describe("work that may finish now or later", () => {
  it("stays synchronous for a value and becomes a promise only for a promise", async () => {
    expect(
      andThen(
        () => 2,
        (value) => value * 3,
        () => -1,
      ),
    ).toBe(6);
    expect(mapMaybe(2, (value) => value + 1)).toBe(3);
    const later = andThen(
      () => Promise.resolve(2),
      (value) => value * 3,
      () => -1,
    );
    expect(later).toBeInstanceOf(Promise);
    await expect(later).resolves.toBe(6);
    await expect(mapMaybe(Promise.resolve(2), (value) => value + 1)).resolves.toBe(3);
  });

  it("a throw of the work goes to onError, now or later; a throw of onValue is not caught", async () => {
    expect(
      andThen(
        () => {
          throw new Error("now");
        },
        () => "value",
        (error) => (error as Error).message,
      ),
    ).toBe("now");
    await expect(
      andThen(
        () => Promise.reject(new Error("later")),
        () => "value",
        (error) => (error as Error).message,
      ),
    ).resolves.toBe("later");
    expect(() =>
      andThen(
        () => 1,
        () => {
          throw new Error("in onValue");
        },
        () => "caught",
      ),
    ).toThrow("in onValue");
  });

  it("andFinally runs `always` once however the work ends, and keeps its outcome", async () => {
    const calls: string[] = [];
    expect(
      andFinally(
        () => 1,
        () => void calls.push("value"),
      ),
    ).toBe(1);
    expect(() =>
      andFinally(
        () => {
          throw new Error("sync");
        },
        () => void calls.push("throw"),
      ),
    ).toThrow("sync");
    await expect(
      andFinally(
        () => Promise.reject(new Error("async")),
        () => void calls.push("reject"),
      ),
    ).rejects.toThrow("async");
    await expect(
      andFinally(
        () => Promise.resolve(2),
        () => void calls.push("resolve"),
      ),
    ).resolves.toBe(2);
    expect(calls).toEqual(["value", "throw", "reject", "resolve"]);
  });
});
