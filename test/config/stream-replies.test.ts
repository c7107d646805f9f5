/**
 * STREAM_REPLIES and STREAM_EDIT_INTERVAL_MS: the parser's forms, the defaults, and a bad
 * value's start-up error naming the variable, the item at fault and the accepted forms.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load-config.js";
import { parseStreamReplies, STREAM_REPLIES_FORMS } from "../../src/config/stream-replies.js";
import { fakeRepo, tempDir } from "../helpers/temp-dir.js";

function load(extra: NodeJS.ProcessEnv = {}) {
  const repoRoot = fakeRepo({ env: "REACT_MAX_STEPS=1\n" });
  return loadConfig({ env: { AGENT_WORKSPACE_DIR: tempDir("laoding-ws-"), ...extra }, repoRoot, cwd: repoRoot });
}

function loadError(extra: NodeJS.ProcessEnv): string {
  try {
    load(extra);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("parseStreamReplies", () => {
  it.each([
    ["on", { console: true, telegram: true, feishu: true }],
    ["off", { console: false, telegram: false, feishu: false }],
    ["on,feishu=off", { console: true, telegram: true, feishu: false }],
    ["off,console=on", { console: true, telegram: false, feishu: false }],
    ["telegram=off", { console: true, telegram: false, feishu: true }],
    ["off,telegram=on,feishu=on", { console: false, telegram: true, feishu: true }],
    [" on , console = off ,", { console: false, telegram: true, feishu: true }],
    ["on,console=on", { console: true, telegram: true, feishu: true }],
  ])("%j streams on %j", (value, streams) => {
    expect(parseStreamReplies(value)).toEqual({ ok: true, value: streams });
  });

  it.each([
    ["", "empty"],
    [",", "empty"],
    ["yes", '"yes" is not on, off or <channel>=on|off'],
    ["ON", '"ON" is not on, off or <channel>=on|off'],
    ["feishu=off,on", '"on" may only be the first item (it sets every channel)'],
    ["on,off", '"off" may only be the first item (it sets every channel)'],
    ["on,slack=off", '"slack=off" names no channel that streams (console, telegram, feishu)'],
    ["on,=off", '"=off" names no channel that streams (console, telegram, feishu)'],
    ["telegram=maybe", '"telegram=maybe": telegram takes on or off'],
    ["feishu=", '"feishu=": feishu takes on or off'],
    ["feishu=off,feishu=on", '"feishu=on": feishu is already set by "feishu=off"'],
  ])("%j is refused: %s", (value, problem) => {
    expect(parseStreamReplies(value)).toEqual({ ok: false, problem });
  });
});

describe("STREAM_REPLIES and STREAM_EDIT_INTERVAL_MS in the configuration", () => {
  it("stream everywhere, at most one update a second, when unset", () => {
    const loaded = load();
    expect(loaded.config.STREAM_REPLIES).toEqual({ console: true, telegram: true, feishu: true });
    expect(loaded.config.STREAM_EDIT_INTERVAL_MS).toBe(1000);
    expect(loaded.sources.STREAM_REPLIES).toEqual({ kind: "default" });
    expect(loaded.raw.STREAM_REPLIES).toBe("on");
  });

  it("take a value from the environment", () => {
    const loaded = load({ STREAM_REPLIES: "off,console=on", STREAM_EDIT_INTERVAL_MS: "250" });
    expect(loaded.config.STREAM_REPLIES).toEqual({ console: true, telegram: false, feishu: false });
    expect(loaded.config.STREAM_EDIT_INTERVAL_MS).toBe(250);
  });

  it("a bad STREAM_REPLIES stops start-up naming the variable, the item and the accepted forms", () => {
    expect(loadError({ STREAM_REPLIES: "on,feishu=no" })).toContain(
      `STREAM_REPLIES="on,feishu=no" from the environment: "feishu=no": feishu takes on or off; expected ${STREAM_REPLIES_FORMS}`,
    );
    expect(loadError({ STREAM_REPLIES: "on,slack=off" })).toContain(
      `STREAM_REPLIES="on,slack=off" from the environment: "slack=off" names no channel that streams (console, telegram, feishu); expected on | off, optionally followed by console=on|off, telegram=on|off, feishu=on|off (a comma list such as on,feishu=off)`,
    );
  });

  it.each([
    ["249", "below the minimum 250"],
    ["60001", "above the maximum 60000"],
    ["1s", "not a whole number"],
  ])("STREAM_EDIT_INTERVAL_MS=%s is refused: %s", (value, why) => {
    expect(loadError({ STREAM_EDIT_INTERVAL_MS: value })).toContain(
      `STREAM_EDIT_INTERVAL_MS="${value}" from the environment: ${why}; expected milliseconds from 250 to 60000`,
    );
  });
});
