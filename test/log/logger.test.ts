import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { childFor, createLogger } from "../../src/log/logger.js";

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").trim().split("\n")));
  return { stream, lines };
}

describe("logger", () => {
  it("redacts secret values wherever they appear and secret keys by path", async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ level: "info", secrets: ["sk-live-123456", "tok\"en:99"], destination: stream });
    logger.info({ config: { LLM_API_KEY: "anything" }, url: "https://x/bot sk-live-123456/getMe" }, "calling with sk-live-123456");
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
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ traceId: "tr-1", agentId: "main", sessionKey: "console:local", msg: "step", level: 20 });
  });
});
