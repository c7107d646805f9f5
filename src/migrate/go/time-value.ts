/**
 * Times as the Go bot stored them, to epoch milliseconds: unix seconds, milliseconds or
 * microseconds (as numbers or numeric text, told apart by size), ISO 8601 text, and
 * SQLite's `YYYY-MM-DD HH:MM:SS[.fff]` (UTC when no zone is given, as CURRENT_TIMESTAMP
 * writes it). Go's driver adds nanoseconds and a zone (`…:00.123456789+08:00`): the
 * fraction is cut to milliseconds, the zone kept.
 */

/** Epoch milliseconds, or undefined for a value that is no time. */
export function toEpochMs(value: unknown): number | undefined {
  if (typeof value === "number" || typeof value === "bigint") return fromNumber(Number(value));
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return fromNumber(Number(text));
  const match =
    /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?(?:\s+[A-Z]{3,5})?$/i.exec(text);
  if (match) {
    const [, date, clock, fraction, zone] = match;
    const ms = fraction ? `.${fraction.slice(1, 4).padEnd(3, "0")}` : "";
    const offset =
      !zone || zone.toUpperCase() === "Z" ? "Z" : zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
    const parsed = Date.parse(`${date}T${clock}${ms}${offset}`);
    return Number.isNaN(parsed) ? undefined : parsed;
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return Date.parse(`${text}T00:00:00Z`);
  return undefined;
}

function fromNumber(value: number): number | undefined {
  if (!Number.isFinite(value) || value <= 0) return undefined;
  // Seconds reach 1e11 in the year 5138; milliseconds reach 1e14 in the year 5138 too.
  if (value < 1e11) return Math.round(value * 1000);
  if (value < 1e14) return Math.round(value);
  if (value < 1e17) return Math.round(value / 1000);
  return Math.round(value / 1e6);
}
