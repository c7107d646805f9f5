/**
 * The one redaction step every error text and log line goes through before it leaves the
 * process (stdout, stderr, the log file, the database, a chat). It removes two things:
 *
 * - every configured secret value, also in the forms it takes inside JSON and URLs;
 * - secrets by shape, configured or not: Telegram's `bot<id>:<token>` URL segment,
 *   `Bearer` credentials, `access_token=` style query and form fields, the
 *   password of a URL's `user:pass@`, and JSON fields named like secrets (`app_secret`,
 *   `tenant_access_token`, `api_key`, ...), because SDKs echo requests in their errors.
 *
 * Secrets shorter than MIN_SECRET_CHARS are not searched for: a two-letter "secret" would
 * shred every line it occurs in and protects nothing (`laoding doctor` is where to say so).
 */

export const REDACTED = "[redacted]";
export const MIN_SECRET_CHARS = 4;

export type Redactor = {
  /** The text with every secret replaced by `[redacted]`. */
  redact: (text: string) => string;
  /**
   * A plain, JSON-ready copy of an error with every secret removed: name, message, stack,
   * the cause chain, and the fields SDK errors carry (grammY's `error`, `method`,
   * `payload`; openai's `status`, `headers`, `error`; axios's `config`, `response`).
   * Fields named like credentials (`authorization`, `app_secret`, ...) are dropped whole.
   */
  redactError: (error: unknown) => unknown;
};

/** Keys whose values are credentials whatever they hold: headers, request bodies, SDK options. */
const SECRET_KEY =
  /^(?:authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[-_]?key|app[-_]?secret|client[-_]?secret|secret|secret[-_]?token|x-telegram-bot-api-secret-token|token|access[-_]?token|refresh[-_]?token|tenant[-_]?access[-_]?token|app[-_]?access[-_]?token|user[-_]?access[-_]?token|password|passwd|encrypt[-_]?key|verification[-_]?token)$/i;
const SECRET_KEY_NAMES =
  "app_secret|client_secret|secret_token|access_token|refresh_token|tenant_access_token|app_access_token|user_access_token|api_key|apiKey|x-api-key|authorization|password|encrypt_key|verification_token";

/** Secrets by shape: [pattern, replacement]. Each keeps enough around the secret to read what failed. */
const SHAPES: [RegExp, string][] = [
  // Telegram puts the bot token in every request path: https://api.telegram.org/bot123456:AA.../getMe
  [/(\/bot\d+):[^/?#\s"'\\]+/g, `$1:${REDACTED}`],
  // A Telegram token outside a URL (a config dump, an SDK message): digits, colon, 30+ token characters.
  [/\b(\d{5,}):[A-Za-z0-9_-]{30,}/g, `$1:${REDACTED}`],
  // "Bearer <token>" in headers and messages. ("Basic" is left to the header's name: it is also a word.)
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{4,}/gi, `$1 ${REDACTED}`],
  // OpenAI-style keys, even masked ones a server echoes back ("sk-abc***xyz").
  [/\bsk-[A-Za-z0-9_*-]{12,}/g, `sk-${REDACTED}`],
  // Query strings and form bodies: ?access_token=..., &app_secret=...
  [new RegExp(`([?&\\s]|^)(${SECRET_KEY_NAMES}|token|key|secret)=[^&#\\s"'\\\\]+`, "gim"), `$1$2=${REDACTED}`],
  // The password of a URL's userinfo (pg connection strings, proxies): keep the user, drop the password.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@"'\\]*):[^/\s@"'\\]+@/gi, `$1:${REDACTED}@`],
  // JSON fields named like secrets, also as JSON inside a JSON string (\"app_secret\":\"...\").
  [new RegExp(`(\\\\*"(?:${SECRET_KEY_NAMES})\\\\*"\\s*:\\s*\\\\*")[^"\\\\]+`, "gi"), `$1${REDACTED}`],
];

const MAX_DEPTH = 6;
const MAX_ARRAY_ITEMS = 20;

export function createRedactor(secrets: readonly string[]): Redactor {
  const needles = secretForms(secrets);
  const redact = (text: string): string => {
    let result = text;
    for (const needle of needles) if (result.includes(needle)) result = result.split(needle).join(REDACTED);
    for (const [pattern, replacement] of SHAPES) result = result.replace(pattern, replacement);
    return result;
  };
  return { redact, redactError: (error) => copyRedacted(error, redact, new Set()) };
}

/** Each secret as written, JSON-escaped and URL-encoded; longest first so a secret inside another goes whole. */
function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_CHARS) continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
    forms.add(encodeURIComponent(secret));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `ancestors`: the objects above this one, so only a real cycle reads "[circular]" (axios shares `config` twice). */
function copyRedacted(value: unknown, redact: (text: string) => string, ancestors: Set<object>): unknown {
  if (typeof value === "string") return redact(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  if (value === null || typeof value !== "object") return value;
  if (ancestors.has(value)) return "[circular]";
  if (ancestors.size >= MAX_DEPTH) return "[too deep]";
  ancestors.add(value);
  try {
    return copyObject(value, (inner) => copyRedacted(inner, redact, ancestors), redact);
  } finally {
    ancestors.delete(value);
  }
}

function copyObject(value: object, next: (inner: unknown) => unknown, redact: (text: string) => string): unknown {
  if (value instanceof Error) return copyError(value, next);
  if (value instanceof URL) return redact(value.href);
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  if (Array.isArray(value)) return value.slice(0, MAX_ARRAY_ITEMS).map(next);
  // Fetch's Headers and axios's AxiosHeaders: their entries are what matters.
  if (value instanceof Headers || value instanceof Map) return copyFields(Object.fromEntries(value.entries()), next);
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype === Object.prototype || prototype === null) return copyFields(value as Record<string, unknown>, next);
  // axios's AxiosHeaders and the like say what they hold through toJSON.
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === "function") {
    try {
      return next((json as () => unknown).call(value));
    } catch {
      return `[${className(value)}]`;
    }
  }
  // Sockets, requests, agents: their insides say nothing a reader needs and may hold anything.
  return `[${className(value)}]`;
}

function className(value: object): string {
  return (value.constructor as { name?: string } | undefined)?.name ?? "object";
}

function copyError(error: Error, next: (inner: unknown) => unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { type: className(error), message: next(error.message) };
  if (error.stack !== undefined) copy.stack = next(error.stack);
  Object.assign(copy, copyFields(error as unknown as Record<string, unknown>, next, ["message", "stack", "cause"]));
  if (error.cause !== undefined) copy.cause = next(error.cause);
  if (error instanceof AggregateError) copy.errors = next(error.errors);
  return copy;
}

function copyFields(
  record: Record<string, unknown>,
  next: (inner: unknown) => unknown,
  skip: string[] = [],
): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(record)) {
    if (skip.includes(key)) continue;
    const value =
      SECRET_KEY.test(key) && inner !== undefined && inner !== null && inner !== "" ? REDACTED : next(inner);
    if (value !== undefined) copy[key] = value;
  }
  return copy;
}
