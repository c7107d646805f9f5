/**
 * The `$NAME` values the parent resolved into a server's configuration (its `env`,
 * `args`, `url` and `headers`) go to that server only and must never reach a log, a
 * status, a test result or a tool result. What the child says about a server (its stderr
 * tail, a transport's error, its tool descriptions and answers) may quote them back
 * (`invalid token ghp_…`), so every such text passes through `redact` first.
 *
 * The values to hide are those the parent names in `mcp.configure`'s `secrets` (every
 * resolved `$NAME`, wherever it was written) and, in case a parent does not send them,
 * the server's env and header values.
 */
import type { McpServerConfig } from "../protocol.js";

/**
 * Shortest `$NAME` value hidden, as the bot's log redactor (src/log/redact.ts): a shorter
 * one would garble every text it happens to be part of.
 */
const MIN_SECRET_LENGTH = 4;
/**
 * Shortest plain env or header value hidden when the parent sent no list: those include
 * values that are no secret at all (`1`, `true`, `/usr`, `8080`).
 */
const MIN_PLAIN_VALUE_LENGTH = 8;
/** Words of a header value that name the scheme, not the secret. */
const SCHEMES = /^(bearer|basic|digest|token)$/i;

/**
 * The values that must not be repeated: `resolved` (the parent's list of every `$NAME`
 * value) and the server's env values, header values and their words (`Bearer <token>`).
 */
export function secretsOf(config: McpServerConfig, resolved: readonly string[] = []): string[] {
  const values = config.transport === "stdio" ? Object.values(config.env) : Object.values(config.headers);
  const words = values.flatMap((value) => [value, ...value.split(/\s+/).filter((word) => !SCHEMES.test(word))]);
  const secrets = [
    ...resolved.filter((value) => value.length >= MIN_SECRET_LENGTH),
    ...words.filter((word) => word.length >= MIN_PLAIN_VALUE_LENGTH),
  ];
  // Longest first, so a token inside a longer value is not left half-hidden.
  return [...new Set(secrets)].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join("***");
  return result;
}

/**
 * A copy of a JSON value (a tool's input schema, as the model sees it) with every string
 * in it, keys included, redacted; the value itself when nothing in it is secret.
 */
export function redactJson<T>(value: T, secrets: readonly string[]): T {
  const text = JSON.stringify(value);
  // A secret as it is written inside a JSON string (quotes and backslashes escaped).
  if (!secrets.some((secret) => text.includes(JSON.stringify(secret).slice(1, -1)))) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return redact(item, secrets);
    if (Array.isArray(item)) return item.map(walk);
    if (item && typeof item === "object")
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [redact(key, secrets), walk(inner)]));
    return item;
  };
  return walk(value) as T;
}

/** The last characters of a stream's text (a server's stderr), for the reason a start or a crash is given. */
export class TextTail {
  private text = "";
  /** Whether older text was dropped: the first line kept may then be the end of a longer one. */
  private cut = false;
  constructor(private readonly maxChars = 2_048) {}

  push(chunk: string): void {
    const text = this.text + chunk;
    if (text.length > this.maxChars) this.cut = true;
    this.text = text.slice(-this.maxChars);
  }

  /**
   * The last non-empty lines, joined on one line, redacted by `hide` BEFORE they are cut to
   * `maxChars`: a secret cut in two would otherwise show its second half. A first line
   * whose start was dropped is left out for the same reason.
   */
  lastLines(maxChars = 400, hide: (text: string) => string = (text) => text): string {
    const lines = this.text.split(/\r?\n/);
    if (this.cut) lines.shift();
    const joined = lines
      .map((line) => line.trim())
      .filter(Boolean)
      .join(" | ");
    return hide(joined).slice(-maxChars);
  }
}
