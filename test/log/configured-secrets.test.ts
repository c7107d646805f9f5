import { describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/config/agents.js";
import type { LoadedConfig } from "../../src/config/load-config.js";
import { configuredSecrets, environmentSecrets } from "../../src/log/configured-secrets.js";

describe("configuredSecrets", () => {
  it("collects the secret variables and the credentials agents.json names, not the app ids", () => {
    const declared: Record<string, string> = {
      TG_TOKEN_OPS: " 777:opsToken ",
      FS_ID_OPS: "cli_0000000000000001",
      FS_SECRET_OPS: "opsAppSecret",
    };
    const loaded = {
      config: {
        TELEGRAM_BOT_TOKEN: "1:mainToken",
        LLM_API_KEY: "sk-main",
        ADMIN_TOKEN: "adminToken",
        FEISHU_APP_ID: "cli_0000000000000002",
        LLM_MODEL: "m",
      },
      declaredValue: (name: string) => declared[name],
    } as unknown as Pick<LoadedConfig, "config" | "declaredValue">;
    const agents = [
      { id: "main" },
      {
        id: "ops",
        telegram: { tokenEnv: "TG_TOKEN_OPS" },
        feishu: { appIdEnv: "FS_ID_OPS", appSecretEnv: "FS_SECRET_OPS" },
      },
    ] as unknown as AgentDefinition[];
    expect(configuredSecrets(loaded, agents).sort()).toEqual([
      " 777:opsToken ",
      "1:mainToken",
      "777:opsToken",
      "adminToken",
      "opsAppSecret",
      "sk-main",
    ]);
  });

  it("reads the secret variables of an environment before any configuration is loaded", () => {
    expect(
      environmentSecrets({
        LLM_API_KEY: "sk-env",
        TELEGRAM_BOT_TOKEN: "",
        PATH: "/bin",
        FEISHU_APP_SECRET: "fsEnv",
      }).sort(),
    ).toEqual(["fsEnv", "sk-env"]);
  });
});
