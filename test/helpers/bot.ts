/**
 * A real bot runtime for end-to-end tests: a seeded workspace, the real store, real
 * toolhost children, and the model pointed at the loopback fake through LLM_BASE_URL.
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach } from "vitest";
import type { IncomingMessage, TurnControl } from "../../src/channels/channel.js";
import { readAgentsFile } from "../../src/config/agents.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createRuntimeLayout } from "../../src/config/runtime-layout.js";
import { createBotRuntime, type BotRuntime, type BotRuntimeOptions } from "../../src/runtime/bot-runtime.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { runLaoding } from "./cli.js";
import { CLI_ENTRY } from "./real-toolhost.js";
import { fakeRepo, tempDir } from "./temp-dir.js";

const open: { runtime: BotRuntime; fake: FakeOpenAI }[] = [];
afterEach(async () => {
  for (const { runtime, fake } of open.splice(0)) {
    await runtime.close();
    await fake.close();
  }
});

export type TestBot = {
  runtime: BotRuntime;
  fake: FakeOpenAI;
  workspaceDir: string;
  repoRoot: string;
  layout: ReturnType<typeof createRuntimeLayout>;
  send(text: string, options?: Partial<IncomingMessage>, control?: TurnControl): Promise<string | undefined>;
};

export async function startTestBot(
  options: {
    env?: Record<string, string>;
    model?: boolean;
    skills?: Record<string, string>;
    watchSkills?: boolean;
    extend?: BotRuntimeOptions["extend"];
  } = {},
): Promise<TestBot> {
  const repoRoot = fakeRepo();
  const workspaceDir = join(tempDir("laoding-bot-"), "rt");
  const seeded = await runLaoding(["init", "--workspace", workspaceDir], { repoRoot });
  if (seeded.code !== 0) throw new Error(seeded.stderr);
  const fake = await startFakeOpenAI();
  const settings: Record<string, string> = {
    REACT_MAX_STEPS: "4",
    TOOLHOST_SANDBOX: "none",
    LLM_MAX_RETRIES: "0",
    LLM_TIMEOUT_MS: "5000",
    BOT_LOCALE: "en",
    // The toolhost child logs to the test's stderr: only what would be worth reading.
    LOG_LEVEL: "warn",
    ALLOWED_COMMANDS: "ls,echo,cat",
    ...(options.model === false ? {} : { LLM_BASE_URL: fake.url, LLM_MODEL: "fake-model", LLM_API_KEY: "sk-test-key" }),
    ...options.env,
  };
  writeFileSync(
    join(workspaceDir, "configs/env"),
    `${Object.entries(settings)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n")}\n`,
  );
  const loaded = loadConfig({ env: {}, repoRoot, cwd: repoRoot, workspaceDir });
  const layout = createRuntimeLayout(workspaceDir, loaded.config);
  for (const [name, content] of Object.entries(options.skills ?? {})) {
    mkdirSync(join(layout.baseSkillsDir, name), { recursive: true });
    writeFileSync(join(layout.baseSkillsDir, name, "SKILL.md"), content);
  }
  const runtime = await createBotRuntime({
    loaded,
    layout,
    agents: readAgentsFile(layout.agentsFile),
    logger: pino({ level: "silent" }),
    cliEntry: CLI_ENTRY,
    ...(options.watchSkills === false ? { watchSkills: false } : {}),
    ...(options.extend ? { extend: options.extend } : {}),
  });
  open.push({ runtime, fake });
  let counter = 0;
  return {
    runtime,
    fake,
    workspaceDir,
    repoRoot,
    layout,
    send: (text, message = {}, control = {}) => {
      counter += 1;
      return runtime.orchestrator.handle(
        {
          channel: "test",
          chatId: "chat-1",
          userId: "u1",
          messageId: `m${counter}`,
          text,
          agentId: "main",
          isOperator: true,
          ...message,
        },
        control,
      );
    },
  };
}

export function skillText(name: string, description: string, body = `# ${name}\n\nDo the thing step by step.`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
}
