import { describe, expect, it } from "vitest";
import { toEpochMs } from "../../src/migrate/go/time-value.js";

describe("Go-era times to epoch milliseconds", () => {
  const at = Date.UTC(2024, 4, 1, 10, 0, 0);
  it("reads unix seconds, milliseconds and microseconds, as numbers or text", () => {
    expect(toEpochMs(at / 1000)).toBe(at);
    expect(toEpochMs(String(at / 1000))).toBe(at);
    expect(toEpochMs(at)).toBe(at);
    expect(toEpochMs(BigInt(at) * 1000n)).toBe(at);
  });
  it("reads ISO text, SQLite's CURRENT_TIMESTAMP (UTC) and Go's driver format with a zone", () => {
    expect(toEpochMs("2024-05-01T10:00:00Z")).toBe(at);
    expect(toEpochMs("2024-05-01 10:00:00")).toBe(at);
    expect(toEpochMs("2024-05-01 18:00:00.123456789+08:00")).toBe(at + 123);
    expect(toEpochMs("2024-05-01T18:00:00+0800")).toBe(at);
  });
  it("refuses what is no time", () => {
    expect(toEpochMs("yesterday")).toBeUndefined();
    expect(toEpochMs(null)).toBeUndefined();
    expect(toEpochMs(0)).toBeUndefined();
  });
});
