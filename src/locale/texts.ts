/**
 * The bot's own words, per BOT_LOCALE: one table per locale (en.ts, zh.ts) with the same
 * keys, and `text()` as the one way to read them. Model output is never translated.
 * A folder of its own because both the agent and the channels speak to people, and
 * channels never import agent/ (test/architecture/layering.test.ts).
 */
import type { ModelErrorKind } from "../llm/model-errors.js";
import { en, type TextKey } from "./en.js";
import { zh } from "./zh.js";

export type Locale = "zh" | "en";
export type { TextKey };

/** Every locale's table, for the test that compares them. */
export const TEXT_TABLES: Readonly<Record<Locale, Readonly<Record<TextKey, string>>>> = { en, zh };

/** The text `key` in `locale`, its `{name}` placeholders filled from `values` (unknown ones left as written). */
export function text(locale: Locale, key: TextKey, values: Record<string, string | number> = {}): string {
  return TEXT_TABLES[locale][key].replace(/\{(\w+)\}/g, (match, name: string) =>
    name in values ? String(values[name]) : match,
  );
}

const MODEL_ERROR_WORDS: Record<ModelErrorKind, TextKey> = {
  rate_limit: "modelErrorRateLimit",
  server: "modelErrorServer",
  connection: "modelErrorConnection",
  timeout: "modelErrorTimeout",
  auth: "modelErrorAuth",
  bad_request: "modelErrorBadRequest",
  bad_response: "modelErrorBadResponse",
};

/** A failed model call's kind in words, for a sentence in `locale`: the raw kind never reaches a person. */
export function modelErrorWords(locale: Locale, kind: ModelErrorKind): string {
  return text(locale, MODEL_ERROR_WORDS[kind]);
}

/**
 * The words for a failed model call: what happened, and who can do what about it. `envFile`
 * and `baseUrl` say where an operator looks (the key, the server's address).
 */
export function modelFailureText(
  locale: Locale,
  failure: { kind: ModelErrorKind; status?: number | undefined },
  where: { envFile: string; baseUrl?: string | undefined },
): string {
  switch (failure.kind) {
    case "auth":
      return text(locale, "modelAuth", { envFile: where.envFile });
    case "connection":
      return text(locale, "modelUnreachable", { baseUrl: where.baseUrl ?? "LLM_BASE_URL" });
    case "bad_request":
      return text(locale, "modelRejected", {
        detail: failure.status ? `HTTP ${failure.status}` : modelErrorWords(locale, failure.kind),
      });
    default:
      return text(locale, "modelFailed", { reason: modelErrorWords(locale, failure.kind) });
  }
}
