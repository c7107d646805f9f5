import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createRuntimeLayout } from "../../src/config/runtime-layout.js";
import { fakeRepo, tempDir, writeFile } from "../helpers/temp-dir.js";

/** A repo whose configs/env sets REACT_MAX_STEPS=1, and a workspace beside it. */
function setup(repoEnv = "REACT_MAX_STEPS=1\n") {
  const repoRoot = fakeRepo({ env: repoEnv });
  const workspaceDir = tempDir("laoding-ws-");
  return { repoRoot, workspaceDir, env: { AGENT_WORKSPACE_DIR: workspaceDir } as NodeJS.ProcessEnv };
}

function load(repoRoot: string, env: NodeJS.ProcessEnv) {
  return loadConfig({ env, repoRoot, cwd: repoRoot });
}

describe("config precedence", () => {
  it("uses the repo env file as fallback when nothing else sets a value", () => {
    const { repoRoot, env } = setup();
    const loaded = load(repoRoot, env);
    expect(loaded.config.REACT_MAX_STEPS).toBe(1);
    expect(loaded.sources.REACT_MAX_STEPS).toEqual({ kind: "file", path: join(repoRoot, "configs", "env") });
  });

  it("repo configs/env beats repo .env (fallback files never override what is already set)", () => {
    const { repoRoot, env } = setup();
    writeFile(join(repoRoot, ".env"), "REACT_MAX_STEPS=9\nCONTEXT_CHAR_BUDGET=5000\n");
    const loaded = load(repoRoot, env);
    expect(loaded.config.REACT_MAX_STEPS).toBe(1);
    expect(loaded.config.CONTEXT_CHAR_BUDGET).toBe(5000);
  });

  it("workspace configs/env beats the repo files", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "REACT_MAX_STEPS=2\n");
    const loaded = load(repoRoot, env);
    expect(loaded.config.REACT_MAX_STEPS).toBe(2);
    expect(loaded.sources.REACT_MAX_STEPS).toEqual({ kind: "file", path: join(workspaceDir, "configs", "env") });
  });

  it("workspace .env beats workspace configs/env", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "REACT_MAX_STEPS=2\n");
    writeFile(join(workspaceDir, ".env"), "REACT_MAX_STEPS=3\n");
    expect(load(repoRoot, env).config.REACT_MAX_STEPS).toBe(3);
  });

  it("CONFIG_ENV_FILE beats the workspace files and loses to the environment", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, ".env"), "REACT_MAX_STEPS=3\nBOT_LOCALE=zh\n");
    const override = writeFile(join(tempDir(), "override.env"), "REACT_MAX_STEPS=4\nBOT_LOCALE=en\n");
    const loaded = load(repoRoot, { ...env, CONFIG_ENV_FILE: override, BOT_LOCALE: "zh" });
    expect(loaded.config.REACT_MAX_STEPS).toBe(4);
    expect(loaded.sources.REACT_MAX_STEPS).toEqual({ kind: "file", path: override });
    expect(loaded.config.BOT_LOCALE).toBe("zh");
    expect(loaded.sources.BOT_LOCALE).toEqual({ kind: "environment" });
  });

  it("the process environment beats every file", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "REACT_MAX_STEPS=2\n");
    const loaded = load(repoRoot, { ...env, REACT_MAX_STEPS: "7" });
    expect(loaded.config.REACT_MAX_STEPS).toBe(7);
    expect(loaded.sources.REACT_MAX_STEPS).toEqual({ kind: "environment" });
  });

  it("a missing CONFIG_ENV_FILE is an error naming the path", () => {
    const { repoRoot, env } = setup();
    expect(() => load(repoRoot, { ...env, CONFIG_ENV_FILE: "/nonexistent/x.env" })).toThrow(
      /CONFIG_ENV_FILE.*\/nonexistent\/x\.env/,
    );
  });

  it("REACT_MAX_STEPS missing everywhere stops start-up naming the variable and where to set it", () => {
    const { repoRoot, workspaceDir, env } = setup("");
    const error = captureError(() => load(repoRoot, env));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain("REACT_MAX_STEPS is not set");
    expect(error.message).toContain(join(workspaceDir, "configs", "env"));
  });

  it("AGENT_WORKSPACE_DIR from the repo env resolves against the repo, not the cwd", () => {
    const repoRoot = fakeRepo({ env: "REACT_MAX_STEPS=1\nAGENT_WORKSPACE_DIR=./rt\n" });
    const loaded = loadConfig({ env: {}, repoRoot, cwd: "/" });
    expect(loaded.workspaceDir).toBe(join(repoRoot, "rt"));
  });

  it("reports keys in env files it does not know (likely typos)", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "REACT_MAX_STPES=2\n");
    expect(load(repoRoot, env).unknownKeys).toEqual([
      { key: "REACT_MAX_STPES", path: join(workspaceDir, "configs", "env") },
    ]);
  });

  it("names a typo'd key with its likely meaning even when the configuration is invalid", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "LLM_MODLE=gpt\nLLM_TIMEOUT_MS=fast\n");
    const error = captureError(() => load(repoRoot, env));
    expect(error.message).toMatch(/LLM_TIMEOUT_MS="fast" from .*: .*expected milliseconds/);
    expect(error.message).toContain(
      `LLM_MODLE in ${join(workspaceDir, "configs", "env")} is not a LaodingBot variable (did you mean LLM_MODEL?); it is ignored`,
    );
  });
});

describe("config validation", () => {
  const cases: [string, string, RegExp][] = [
    [
      "REACT_MAX_STEPS",
      "ten",
      /REACT_MAX_STEPS="ten" from .*configs\/env: not a whole number; expected a whole number from 1 to 100/,
    ],
    ["REACT_MAX_STEPS", "0", /REACT_MAX_STEPS="0" .*below the minimum 1/],
    [
      "MESSAGE_CHANNEL",
      "slack",
      /MESSAGE_CHANNEL="slack" .*not one of console \| telegram \| feishu; expected a comma list of console \| telegram \| feishu/,
    ],
    ["TOOLHOST_SANDBOX", "docker", /TOOLHOST_SANDBOX="docker" .*expected auto \| bwrap \| none/],
    ["LLM_BASE_URL", "localhost:8080", /LLM_BASE_URL="localhost:8080" .*not an http\(s\) URL/],
  ];
  it.each(cases)("%s=%s names the variable, its source and what is expected", (name, value, pattern) => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), `${name}=${value}\n`);
    const error = captureError(() => load(repoRoot, env));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(pattern);
    expect(error.message).toContain("configs/env.example");
  });

  it("names the environment as the source of a bad value set there", () => {
    const { repoRoot, env } = setup();
    expect(() => load(repoRoot, { ...env, BOT_LOCALE: "fr" })).toThrow(/BOT_LOCALE="fr" from the environment/);
  });

  it("never prints a secret value in an error", () => {
    const { repoRoot, env } = setup();
    const error = captureError(() => load(repoRoot, { ...env, ADMIN_TOKEN: "short-secret" }));
    expect(error.message).toMatch(/ADMIN_TOKEN=\(secret\) from the environment: shorter than 16 characters/);
    expect(error.message).not.toContain("short-secret");
  });

  it("a malformed env line names the file and line", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(join(workspaceDir, "configs", "env"), "# ok\nREACT_MAX_STEPS 5\n");
    expect(() => load(repoRoot, env)).toThrow(new RegExp(`${join(workspaceDir, "configs", "env")}:2: cannot read`));
  });
});

describe("normalised lists and paths", () => {
  it("resolves ALLOWED_DIRS against the workspace, removes duplicates, and adds nothing to ALLOWED_COMMANDS", () => {
    const { repoRoot, workspaceDir, env } = setup();
    writeFile(
      join(workspaceDir, "configs", "env"),
      "ALLOWED_DIRS=data/extra, /opt/x ,data/extra,\nALLOWED_COMMANDS=ls,ls,git\n",
    );
    const loaded = load(repoRoot, env);
    const layout = createRuntimeLayout(loaded.workspaceDir, loaded.config);
    expect(layout.extraAllowedDirs).toEqual([join(workspaceDir, "data/extra"), "/opt/x"]);
    expect(layout.allowedCommands).toEqual(["ls", "git"]);
    expect(layout.agentTrees("a1")).toEqual({
      workTree: join(workspaceDir, "workspace", "a1"),
      experienceDir: join(workspaceDir, "share", "agent-experience", "a1"),
      privateDir: join(workspaceDir, "share", "agents", "a1"),
      skillsDir: join(workspaceDir, "share", "agents", "a1", "skills"),
    });
  });

  it("keeps AUTO_SKILL_DIR per agent", () => {
    const { repoRoot, workspaceDir, env } = setup();
    const withPlaceholder = load(repoRoot, { ...env, AUTO_SKILL_DIR: "drafts/{agent}/skills" });
    expect(createRuntimeLayout(workspaceDir, withPlaceholder.config).agentTrees("a1").skillsDir).toBe(
      join(workspaceDir, "drafts/a1/skills"),
    );
    const plain = load(repoRoot, { ...env, AUTO_SKILL_DIR: "/srv/drafts" });
    expect(createRuntimeLayout(workspaceDir, plain.config).agentTrees("a1").skillsDir).toBe("/srv/drafts/a1");
  });
});

function captureError(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("a Go-era configs/env", () => {
  it("is read as it is: export lines, quotes and comments load; keys only the Go bot knew are warnings, not failures", () => {
    const { repoRoot, workspaceDir, env } = setup();
    const goEra = [
      "# LaodingBot (Go) configuration",
      "export REACT_MAX_STEPS=12",
      'LLM_BASE_URL="https://api.deepseek.com/v1"',
      "LLM_MODEL='deepseek-chat'",
      "ALLOWED_COMMANDS=ls,cat,grep,python3   # tools the agent may run",
      "GAP_DRAFT_TRIGGER_COUNT=3",
      "GAP_CLUSTER_LOOKBACK_HOURS=72",
      "BOT_LOCALE=zh",
      "GO_WORKER_POOL=8",
      "",
    ].join("\n");
    writeFile(join(workspaceDir, "configs", "env"), goEra);
    const loaded = load(repoRoot, env);
    expect(loaded.config).toMatchObject({
      REACT_MAX_STEPS: 12,
      LLM_BASE_URL: "https://api.deepseek.com/v1",
      LLM_MODEL: "deepseek-chat",
      ALLOWED_COMMANDS: ["ls", "cat", "grep", "python3"],
      GAP_DRAFT_TRIGGER_COUNT: 3,
      GAP_CLUSTER_LOOKBACK_HOURS: 72,
      BOT_LOCALE: "zh",
    });
    expect(loaded.unknownKeys).toEqual([{ key: "GO_WORKER_POOL", path: join(workspaceDir, "configs", "env") }]);
  });
});
