import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderEnvExample } from "../../src/config/env-example.js";
import { VARIABLE_NAMES } from "../../src/config/variables.js";
import { REAL_REPO_ROOT } from "../helpers/temp-dir.js";

describe("configs/env.example", () => {
  const text = readFileSync(join(REAL_REPO_ROOT, "configs", "env.example"), "utf8");

  it("is the rendering of the variable table (regenerate with `laoding config --env-example`)", () => {
    expect(text).toBe(renderEnvExample());
  });

  it("documents every variable, including those the architecture names", () => {
    for (const name of VARIABLE_NAMES) expect(text).toMatch(new RegExp(`^#? ?${name}=`, "m"));
    for (const name of [
      "AGENT_WORKSPACE_DIR",
      "CONFIG_ENV_FILE",
      "REACT_MAX_STEPS",
      "ALLOWED_DIRS",
      "ALLOWED_COMMANDS",
      "WORK_DIR",
      "AUTO_SKILL_DIR",
      "GAP_DRAFT_TRIGGER_COUNT",
      "GAP_CLUSTER_LOOKBACK_HOURS",
      "MESSAGE_CHANNEL",
      "LLM_BASE_URL",
      "LLM_API_KEY",
      "LLM_MODEL",
      "SHARE_DIR",
      "TOOLHOST_SANDBOX",
      "TELEGRAM_BOT_TOKEN",
      "TELEGRAM_API_ROOT",
      "FEISHU_APP_ID",
      "FEISHU_APP_SECRET",
      "FEISHU_DOMAIN",
      "ADMIN_PORT",
      "ADMIN_TOKEN",
      "LOG_LEVEL",
      "BOT_LOCALE",
    ]) {
      expect(VARIABLE_NAMES).toContain(name);
    }
  });
});
