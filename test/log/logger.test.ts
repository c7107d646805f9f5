import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { Bot } from "grammy";
import { describe, expect, it } from "vitest";
import { openLogFile } from "../../src/log/log-file.js";
import { childFor, createLogger } from "../../src/log/logger.js";
import { closedPortUrl } from "./echoing-server.js";

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").trim().split("\n")));
  return { stream, lines };
}

describe("logger", () => {
  it("redacts secret values wherever they appear and secret keys by path", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ level: "info", secrets: ["sk-live-123456", 'tok"en:99'], destination: stream });
    logger.info(
      { config: { LLM_API_KEY: "anything" }, url: "https://x/bot sk-live-123456/getMe" },
      "calling with sk-live-123456",
    );
    logger.error(new Error('token tok"en:99 rejected'), "failed");
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join("\n");
    expect(text).not.toContain("sk-live-123456");
    expect(text).not.toContain("anything");
    expect(text).not.toContain('tok\\"en:99');
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(4);
  });

  it("child loggers carry trace, agent and session ids as JSON", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ level: "debug", secrets: [], destination: stream });
    childFor(logger, { traceId: "tr-1", agentId: "main", sessionKey: "console:local" }).debug("step");
    await new Promise((resolve) => setImmediate(resolve));
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      traceId: "tr-1",
      agentId: "main",
      sessionKey: "console:local",
      msg: "step",
      level: 20,
    });
  });
});

describe("logger: SDK errors and the log file", () => {
  it("writes a grammY network error to the log file and the notice without the token, configured or not", async () => {
    const token = "5550001234:AAHk9-SeCrEtTeLeGrAm_0123456789abcdef";
    const error = await new Bot(token, { client: { apiRoot: await closedPortUrl() } }).api
      .getMe()
      .catch((failure: unknown) => failure);
    const dir = mkdtempSync(join(tmpdir(), "laoding-log-"));
    try {
      const notices = capture();
      // No configured secrets at all: the token is known by its shape.
      const logger = createLogger({
        level: "info",
        secrets: [],
        file: { sink: openLogFile({ dir, maxBytes: 1_000_000, keep: 2 }), notices: notices.stream },
      });
      logger.error({ err: error }, `polling stopped: ${String((error as { error?: unknown }).error)}`);
      await new Promise((resolve) => setImmediate(resolve));
      const written = readFileSync(join(dir, "laoding.log"), "utf8");
      expect(written).toContain("ECONNREFUSED");
      expect(written).toContain('"type":"HttpError"');
      expect(written).not.toContain("SeCrEtTeLeGrAm");
      expect(notices.lines.join("\n")).toContain("polling stopped");
      expect(notices.lines.join("\n")).not.toContain("SeCrEtTeLeGrAm");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
