/**
 * What `laoding start` and `laoding chat` hand the channels from STREAM_REPLIES and
 * STREAM_EDIT_INTERVAL_MS: the console's switch, and the chat gateway's streaming options.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { consoleStreams, gatewayStreaming } from "../../src/cli/streaming-options.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

function config(env: NodeJS.ProcessEnv) {
  const repoRoot = fakeRepo({ env: "REACT_MAX_STEPS=1\n" });
  return loadConfig({ env: { AGENT_WORKSPACE_DIR: tempDir("laoding-ws-"), ...env }, repoRoot, cwd: repoRoot }).config;
}

describe("streaming options", () => {
  it("by default every channel streams, at STREAM_EDIT_INTERVAL_MS, with the status and interruption texts in BOT_LOCALE", () => {
    const settings = config({ BOT_LOCALE: "en", STREAM_EDIT_INTERVAL_MS: "1500" });
    expect(consoleStreams(settings)).toBe(true);
    const streaming = gatewayStreaming(settings);
    expect(streaming.channels).toEqual(new Set(["telegram", "feishu"]));
    expect(streaming.intervalMs).toBe(1500);
    expect(streaming.statusText("web.fetch")).toBe("⏳ Running web.fetch…");
    expect(streaming.interruptedText).toBe(
      "⚠️ This answer was cut off when the bot stopped. The full answer follows in a new message.",
    );
  });

  it("speak the bot's locale", () => {
    const streaming = gatewayStreaming(config({ BOT_LOCALE: "zh" }));
    expect(streaming.intervalMs).toBe(1000);
    expect(streaming.statusText("shell.exec")).toBe("⏳ 正在运行 shell.exec…");
    expect(streaming.interruptedText).toBe("⚠️ 机器人停止时这条回答被中断了，完整回答会在新消息里发出。");
  });

  it("STREAM_REPLIES=off,console=on: the console streams, no chat channel does (previews left by a stopped run are still marked)", () => {
    const settings = config({ STREAM_REPLIES: "off,console=on", BOT_LOCALE: "en" });
    expect(consoleStreams(settings)).toBe(true);
    const streaming = gatewayStreaming(settings);
    expect(streaming.channels).toEqual(new Set());
    expect(streaming.interruptedText).toContain("This answer was cut off");
  });

  it("a channel turned off is left out of the gateway's set", () => {
    expect(gatewayStreaming(config({ STREAM_REPLIES: "on,feishu=off" })).channels).toEqual(new Set(["telegram"]));
    const telegramOff = config({ STREAM_REPLIES: "telegram=off,console=off" });
    expect(gatewayStreaming(telegramOff).channels).toEqual(new Set(["feishu"]));
    expect(consoleStreams(telegramOff)).toBe(false);
  });
});
