/**
 * A server's `env` values and `headers` hold the `$NAME` secrets the parent resolved: they
 * go to that server only and must never reach a log, a status or a tool result. What the
 * child says about a server (its stderr tail, a transport's error) may quote them back
 * (`invalid token ghp_…`), so every such text passes through `redact` first.
 */
import type { McpServerConfig } from "../protocol.js";

/** Shorter values are too common to be secrets worth hiding (`1`, `true`, `/usr`, `8080`). */
const MIN_SECRET_LENGTH = 8;
/** Words of a header value that name the scheme, not the secret. */
const SCHEMES = /^(bearer|basic|digest|token)$/i;

/** The values of a server's configuration that must not be repeated: env values, header values and their words (`Bearer <token>`). */
export function secretsOf(config: McpServerConfig): string[] {
  const values = config.transport === "stdio" ? Object.values(config.env) : Object.values(config.headers);
  const words = values.flatMap((value) => [value, ...value.split(/\s+/).filter((word) => !SCHEMES.test(word))]);
  // Longest first, so a token inside a longer value is not left half-hidden.
  return [...new Set(words.filter((word) => word.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join("***");
  return result;
}

/** The last characters of a stream's text (a server's stderr), for the reason a start or a crash is given. */
export class TextTail {
  private text = "";
  constructor(private readonly maxChars = 2_048) {}

  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.maxChars);
  }

  /** The last non-empty lines, joined on one line. */
  lastLines(maxChars = 400): string {
    const lines = this.text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
    return lines.join(" | ").slice(-maxChars);
  }
}
