/**
 * The redactor over the errors the SDKs really throw, made by the SDKs themselves against
 * loopback servers (a closed port, a server that echoes the request in its error): grammY,
 * openai, the Lark SDK (axios), fetch; plus a pg-style connection string.
 */
import * as lark from "@larksuiteoapi/node-sdk";
import { Bot, GrammyError, HttpError } from "grammy";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedactor, REDACTED } from "../../src/log/redact.js";
import { closedPortUrl, ECHO_TENANT_TOKEN, startEchoingServer, type EchoingServer } from "./echoing-server.js";

const TELEGRAM_TOKEN = "5550001234:AAHk9-SeCrEtTeLeGrAm_0123456789abcdef";
const TELEGRAM_SECRET_PART = TELEGRAM_TOKEN.split(":")[1] as string;
const APP_SECRET = "fsSeCrEt4f1c9a7e2b";
const API_KEY = "sk-llmSeCrEt7d2e9b41c0";

let echo: EchoingServer;
let echoWithTenantToken: EchoingServer;
let closed: string;
beforeAll(async () => {
  [echo, echoWithTenantToken, closed] = await Promise.all([
    startEchoingServer(),
    startEchoingServer({ feishuTokenOk: true }),
    closedPortUrl(),
  ]);
});
afterAll(async () => {
  await Promise.all([echo.close(), echoWithTenantToken.close()]);
});

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("the call should have failed"),
    (error: unknown) => error,
  );
}

/** Everything a log line or a report could show of the copy. */
function shown(value: unknown): string {
  return JSON.stringify(value);
}

describe("createRedactor().redactError over the SDKs' own errors", () => {
  it("grammY HttpError (API unreachable): the token in the request URL is gone, the reason stays", async () => {
    const error = await failureOf(new Bot(TELEGRAM_TOKEN, { client: { apiRoot: closed } }).api.getMe());
    expect(error).toBeInstanceOf(HttpError);
    // The raw error names the URL with the token in it: what used to reach the console.
    expect(JSON.stringify({ message: ((error as HttpError).error as Error).message })).toContain(TELEGRAM_SECRET_PART);
    for (const secrets of [[TELEGRAM_TOKEN], []]) {
      const copy = shown(createRedactor(secrets).redactError(error));
      expect(copy).not.toContain(TELEGRAM_SECRET_PART);
      expect(copy).toContain("ECONNREFUSED");
      expect(copy).toContain("getMe");
    }
    // Unconfigured, the token is still known by its shape; the bot id is not a secret.
    expect(shown(createRedactor([]).redactError(error))).toContain(`/bot5550001234:${REDACTED}/getMe`);
  });

  it("grammY GrammyError (the server echoes the request): description and payload lose the secrets", async () => {
    const bot = new Bot(TELEGRAM_TOKEN, { client: { apiRoot: echo.url } });
    const error = await failureOf(
      bot.api.setWebhook("https://bot.example/hook", { secret_token: "whSeCrEt0123456789" }),
    );
    expect(error).toBeInstanceOf(GrammyError);
    expect((error as GrammyError).description).toContain(TELEGRAM_SECRET_PART);
    const copy = shown(createRedactor([]).redactError(error));
    expect(copy).not.toContain(TELEGRAM_SECRET_PART);
    expect(copy).not.toContain("whSeCrEt0123456789");
    expect(copy).toContain("setWebhook");
    expect(copy).toContain('"error_code":401');
  });

  it("openai APIConnectionError and APIError (the key echoed in the body, the headers)", async () => {
    const dead = new OpenAI({ apiKey: API_KEY, baseURL: closed, maxRetries: 0 });
    const connection = await failureOf(
      dead.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(connection).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(shown(createRedactor([API_KEY]).redactError(connection))).toContain("ECONNREFUSED");

    const echoing = new OpenAI({ apiKey: API_KEY, baseURL: `${echo.url}/v1`, maxRetries: 0 });
    const apiError = await failureOf(
      echoing.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    expect(apiError).toBeInstanceOf(OpenAI.APIError);
    expect((apiError as Error).message).toContain(API_KEY);
    for (const secrets of [[API_KEY], []]) {
      const copy = shown(createRedactor(secrets).redactError(apiError));
      expect(copy).not.toContain(API_KEY);
      expect(copy).toContain('"status":500');
      expect(copy).toContain("upstream failed");
    }
  });

  it("the Lark SDK's axios error carries the tenant token as Bearer and the echoed body: both gone, unconfigured", async () => {
    const client = new lark.Client({
      appId: "cli_a1b2c3d4e5f60718",
      appSecret: APP_SECRET,
      domain: echoWithTenantToken.url,
      logger: silentLarkLogger(),
      loggerLevel: lark.LoggerLevel.fatal,
    });
    const error = await failureOf(
      client.im.v1.message.create({
        params: { receive_id_type: "chat_id" },
        data: { receive_id: "oc_1", content: "{}", msg_type: "text" },
      }),
    );
    const raw = error as { config?: { headers?: unknown }; response?: { status?: number } };
    expect(raw.response?.status).toBe(500);
    expect(String((raw.config?.headers as { Authorization?: string } | undefined)?.Authorization)).toContain(
      ECHO_TENANT_TOKEN,
    );
    const copy = shown(createRedactor([APP_SECRET]).redactError(error));
    expect(copy).not.toContain(ECHO_TENANT_TOKEN);
    expect(copy).not.toContain(APP_SECRET);
    expect(copy).toContain("/open-apis/im/v1/messages");
    expect(copy).toContain('"status":500');
    // The request it was making: no sockets, no agents, bounded.
    expect(copy.length).toBeLessThan(20_000);
  });

  it("fetch's TypeError and its cause", async () => {
    const error = await failureOf(fetch(`${closed}/bot${TELEGRAM_TOKEN}/getMe`));
    const copy = shown(createRedactor([TELEGRAM_TOKEN]).redactError(error));
    expect(copy).toContain("fetch failed");
    expect(copy).toContain("ECONNREFUSED");
    expect(copy).not.toContain(TELEGRAM_SECRET_PART);
  });

  it("a pg-style connection string keeps its user and loses its password, in text and in fields", () => {
    const error = Object.assign(
      new Error("connect ECONNREFUSED for postgres://laoding:pgSeCrEt99@db.internal:5432/bot"),
      { connectionString: "postgres://laoding:pgSeCrEt99@db.internal:5432/bot", password: "pgSeCrEt99" },
    );
    const copy = shown(createRedactor([]).redactError(error));
    expect(copy).not.toContain("pgSeCrEt99");
    expect(copy).toContain(`postgres://laoding:${REDACTED}@db.internal:5432/bot`);
  });

  it("survives cycles and depth", () => {
    const error = new Error(`failed with ${API_KEY}`) as Error & { self?: unknown; deep?: unknown };
    error.self = error;
    error.deep = { a: { b: { c: { d: { e: { f: { g: API_KEY } } } } } } };
    const copy = shown(createRedactor([API_KEY]).redactError(error));
    expect(copy).not.toContain(API_KEY);
    expect(copy).toContain("[circular]");
  });
});

describe("createRedactor().redact", () => {
  it("removes each configured secret as written, JSON-escaped and URL-encoded, the longer first", () => {
    const { redact } = createRedactor(['pa"ss\\word', "a b&c=d/e", "abcd", "abcdefgh"]);
    expect(redact('x pa"ss\\word y')).toBe(`x ${REDACTED} y`);
    expect(redact(JSON.stringify({ v: 'pa"ss\\word' }))).toBe(`{"v":"${REDACTED}"}`);
    expect(redact(`https://h/?q=${encodeURIComponent("a b&c=d/e")}`)).toBe(`https://h/?q=${REDACTED}`);
    expect(redact("abcdefgh")).toBe(REDACTED);
  });

  it("removes secrets by shape, configured or not", () => {
    const { redact } = createRedactor([]);
    expect(redact(`request to https://api.telegram.org/bot${TELEGRAM_TOKEN}/getMe failed`)).toBe(
      `request to https://api.telegram.org/bot5550001234:${REDACTED}/getMe failed`,
    );
    expect(redact(`token ${TELEGRAM_TOKEN} refused`)).not.toContain(TELEGRAM_SECRET_PART);
    expect(redact("Authorization: Bearer t-abcdef123456")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redact("GET /v1/x?access_token=abc123&page=2")).toBe(`GET /v1/x?access_token=${REDACTED}&page=2`);
    expect(redact('{"app_id":"cli_1","app_secret":"s3cr3tvalue"}')).toBe(
      `{"app_id":"cli_1","app_secret":"${REDACTED}"}`,
    );
    expect(redact('"{\\"tenant_access_token\\":\\"t-xyz987\\"}"')).toBe(
      `"{\\"tenant_access_token\\":\\"${REDACTED}\\"}"`,
    );
    expect(redact("Incorrect API key provided: sk-proj-abc123***wxyz")).toBe(
      `Incorrect API key provided: sk-${REDACTED}`,
    );
  });

  it("leaves ordinary text alone, and never searches for empty or very short secrets", () => {
    const { redact } = createRedactor(["", "ab"]);
    for (const text of [
      "a basic check of the token expiry",
      "see https://example.com/path?x=1&page=2",
      "about 42 tokens, 3 steps; a b c",
      "bot 12:30 meeting",
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});

function silentLarkLogger() {
  const quiet = () => undefined;
  return { error: quiet, warn: quiet, info: quiet, debug: quiet, trace: quiet };
}
