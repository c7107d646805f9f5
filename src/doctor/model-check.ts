/**
 * The model endpoint answers a tiny request: one user word, max_tokens 1, no retries, a
 * short deadline. The base URL's shape is checked first, because a wrong one fails in
 * ways that point elsewhere: a URL ending in /chat/completions gets the path twice, and
 * one without /v1 gets a 404 that reads like an unknown model.
 */
import type { Config } from "../config/load-config.js";
import type { ChatModel } from "../llm/chat-model.js";
import type { OpenAIChatModelOptions } from "../llm/openai-chat-model.js";
import { ModelError } from "../llm/model-errors.js";
import { failed, passed, type CheckResult } from "./check-result.js";

/** Long enough for a cold server's first token, short enough that a dead one is said soon. */
export const DOCTOR_MODEL_TIMEOUT_MS = 15_000;

const ID = "model";

export type ModelCheckOptions = {
  config: Pick<Config, "LLM_BASE_URL" | "LLM_MODEL" | "LLM_API_KEY" | "LLM_TIMEOUT_MS">;
  envFile: string;
  createModel: (options: OpenAIChatModelOptions) => ChatModel;
};

export async function checkModel(options: ModelCheckOptions): Promise<CheckResult> {
  const { LLM_BASE_URL: baseUrl, LLM_MODEL: model, LLM_API_KEY: apiKey } = options.config;
  if (!baseUrl || !model) {
    return failed(
      ID,
      "model",
      `${!baseUrl && !model ? "LLM_BASE_URL and LLM_MODEL are" : !baseUrl ? "LLM_BASE_URL is" : "LLM_MODEL is"} not set: the bot answers every message with how to configure a model`,
      `Set LLM_BASE_URL (such as https://api.openai.com/v1), LLM_MODEL and LLM_API_KEY in ${options.envFile}`,
    );
  }
  const shown = displayUrl(baseUrl);
  const title = `model ${model} at ${shown}`;
  const path = new URL(baseUrl).pathname.replace(/\/+$/, "");
  if (/\/chat\/completions$/.test(path)) {
    return failed(
      ID,
      title,
      `LLM_BASE_URL ends in /chat/completions, which the client adds itself (requests would go to .../chat/completions/chat/completions)`,
      `Set LLM_BASE_URL=${shown.replace(/\/chat\/completions\/*$/, "")} in ${options.envFile}`,
    );
  }
  const timeoutMs = Math.min(options.config.LLM_TIMEOUT_MS, DOCTOR_MODEL_TIMEOUT_MS);
  try {
    const client = options.createModel({
      baseURL: baseUrl,
      model,
      timeoutMs,
      maxRetries: 0,
      ...(apiKey ? { apiKey } : {}),
    });
    // The purpose only labels a usage record, and the doctor records none.
    await client.complete({ messages: [{ role: "user", content: "ping" }], maxTokens: 1, purpose: "route" });
    return passed(ID, `${title} answers`);
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return classify(error, { title, shown, path, model, timeoutMs, envFile: options.envFile });
  }
}

type Context = { title: string; shown: string; path: string; model: string; timeoutMs: number; envFile: string };

function classify(error: ModelError, context: Context): CheckResult {
  const { title, shown, envFile } = context;
  const url = new URL(shown);
  switch (error.kind) {
    case "connection":
      return failed(
        ID,
        title,
        `${error.message}`,
        `Check that the model server runs and listens at ${url.host} (LLM_BASE_URL: host and port${url.protocol === "https:" ? ", and that it speaks https" : ""}) in ${envFile}, and that this machine can reach it (firewall, proxy)`,
      );
    case "timeout":
      return failed(
        ID,
        title,
        `no answer within ${context.timeoutMs / 1000} s`,
        `Check that the server at ${url.host} is up and not overloaded; a slow one needs a larger LLM_TIMEOUT_MS in ${envFile}`,
      );
    case "auth":
      return failed(
        ID,
        title,
        `the server refused the API key (${error.status ?? "401"})`,
        `Set LLM_API_KEY in ${envFile} to a valid key for ${url.host} (the key itself is never shown here)`,
      );
    case "rate_limit":
      // It answered, and knew the key: the endpoint works, it is only busy.
      return passed(ID, `${title} answers`, `it is rate limiting right now (${error.status ?? 429})`);
    case "server":
      return failed(
        ID,
        title,
        error.message,
        `The model server itself failed: check its logs or status page, then run \`laoding doctor\` again`,
      );
    case "bad_request":
      if (error.status === 404) {
        if (!/\/v\d+[a-z]*(\/|$)/.test(context.path)) {
          return failed(
            ID,
            title,
            `the server answered 404: LLM_BASE_URL has no /v1 (OpenAI-compatible servers serve /v1/chat/completions)`,
            `Set LLM_BASE_URL=${shown.replace(/\/+$/, "")}/v1 in ${envFile}`,
          );
        }
        return failed(
          ID,
          title,
          `the server answered 404 for model "${context.model}": it does not serve a model of that name`,
          `Set LLM_MODEL in ${envFile} to a model the server serves (GET ${shown.replace(/\/+$/, "")}/models lists them)`,
        );
      }
      return failed(
        ID,
        title,
        error.message,
        `Check LLM_MODEL ("${context.model}") and LLM_BASE_URL in ${envFile}: the server refused a one-word chat request`,
      );
    case "bad_response":
      return failed(
        ID,
        title,
        `${error.message}: it does not answer like an OpenAI-compatible chat completions server`,
        `Check LLM_BASE_URL in ${envFile}: it should be the API's base (such as https://api.openai.com/v1), not a web page`,
      );
  }
}

/** The base URL without user and password (a URL may carry credentials). */
function displayUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = "";
  parsed.password = "";
  return parsed.toString().replace(/\/$/, "");
}
